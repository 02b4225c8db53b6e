// Package tracing keeps AWS X-Ray behind one small API, so that moving to OpenTelemetry later
// touches this file only. It is the only package that imports the X-Ray SDK
// (github.com/aws/aws-xray-sdk-go/v2, in maintenance mode since 2026-02-25).
//
// Tracing is on when an X-Ray daemon is configured (AWS_XRAY_DAEMON_ADDRESS, which Lambda sets
// when the function's Tracing is Active) and AWS_XRAY_SDK_DISABLED is not "true". Otherwise
// (tests, local runs) every function here is a quiet no-op, except that trace headers are still
// carried: ContextWithHeader then TraceHeader hands an incoming header on unchanged.
//
// The trace header travels outbox row -> PutEvents TraceHeader -> EventBridge -> SQS
// AWSTraceHeader -> trigger -> build-queue AWSTraceHeader -> builder -> the frame.built outbox
// row, which the relay publishes with it in turn.
package tracing

import (
	"context"
	"os"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-xray-sdk-go/v2/header"
	"github.com/aws/aws-xray-sdk-go/v2/instrumentation/awsv2"
	"github.com/aws/aws-xray-sdk-go/v2/strategy/ctxmissing"
	"github.com/aws/aws-xray-sdk-go/v2/xray"
	"github.com/aws/aws-xray-sdk-go/v2/xraylog"
)

var enabled = os.Getenv("AWS_XRAY_DAEMON_ADDRESS") != "" && !strings.EqualFold(os.Getenv("AWS_XRAY_SDK_DISABLED"), "true")

func init() {
	// A missing segment is never worth a log line or a panic here: work outside a traced request
	// is simply not traced. The SDK's own logging is silenced unless tracing is on, and then only
	// errors reach stderr.
	if enabled {
		xray.SetLogger(xraylog.NewDefaultLogger(os.Stderr, xraylog.LogLevelError))
	} else {
		xray.SetLogger(xraylog.NullLogger)
	}
	_ = xray.Configure(xray.Config{ContextMissingStrategy: ctxmissing.NewDefaultIgnoreErrorStrategy()})
}

// Enabled reports whether segments are recorded and sent to the X-Ray daemon.
func Enabled() bool { return enabled }

// InstrumentAWS makes every client built from cfg record a subsegment per AWS call and send the
// trace header with it. Without tracing it leaves cfg alone.
func InstrumentAWS(cfg *aws.Config) {
	if enabled {
		awsv2.AWSV2Instrumentor(&cfg.APIOptions)
	}
}

func noop(error) {}

// StartSegment begins a unit of work named name and returns the context to do it in and the
// function that ends it (pass the work's error, or nil). Inside a traced context (a Lambda
// invocation, a header from ContextWithHeader, an open segment) the work becomes a subsegment of
// that trace; otherwise a new root segment starts.
func StartSegment(ctx context.Context, name string) (context.Context, func(error)) {
	if !enabled {
		return ctx, noop
	}
	if xray.GetSegment(ctx) != nil || incoming(ctx) != "" {
		return StartSubsegment(ctx, name)
	}
	ctx, seg := xray.BeginSegment(ctx, name)
	return ctx, seg.Close
}

// StartSubsegment begins a subsegment named name; a no-op when there is no trace to attach it to.
func StartSubsegment(ctx context.Context, name string) (context.Context, func(error)) {
	if !enabled {
		return ctx, noop
	}
	sub, seg := xray.BeginSubsegment(ctx, name)
	if seg == nil {
		return ctx, noop
	}
	return sub, seg.Close
}

// Annotate adds an indexed annotation (firm, matter, token) to the current (sub)segment; a no-op
// without one.
func Annotate(ctx context.Context, key string, value any) {
	if enabled {
		_ = xray.AddAnnotation(ctx, key, value)
	}
}

// TraceHeader returns the header to hand downstream, "Root=...;Parent=...;Sampled=...": the
// current sampled (sub)segment as parent when tracing is on, else the incoming header carried by
// the context (Lambda's, or one set with ContextWithHeader). Store it in the outbox row and pass
// it as PutEvents' TraceHeader or SQS's AWSTraceHeader. "" when there is no trace.
func TraceHeader(ctx context.Context) string {
	if enabled {
		if seg := xray.GetSegment(ctx); seg != nil && seg.ParentSegment != nil && seg.ParentSegment.Sampled && seg.ID != "" {
			h := seg.DownstreamHeader()
			if in := incoming(ctx); in != "" && h.AdditionalData == nil {
				h.AdditionalData = header.FromString(in).AdditionalData // keep Lineage and friends
			}
			return format(h)
		}
	}
	return incoming(ctx)
}

// ContextWithHeader continues the trace of an incoming header (an SQS message's AWSTraceHeader,
// an outbox row's stored header): segments started from the returned context join that trace as
// children of the header's Parent, and TraceHeader hands the trace on. Any open segment in ctx is
// set aside. A header without a Root leaves ctx unchanged.
func ContextWithHeader(ctx context.Context, traceHeader string) context.Context {
	h := header.FromString(traceHeader)
	if h.TraceID == "" {
		return ctx
	}
	ctx = context.WithValue(ctx, xray.ContextKey, (*xray.Segment)(nil))
	// The key the Lambda runtime uses for the invocation's header; the SDK makes a facade parent
	// from it, so subsegments attach to the header's trace and parent.
	return context.WithValue(ctx, xray.LambdaTraceHeaderKey, format(h)) //nolint:staticcheck // the SDK's key is a string
}

// TraceID returns the trace id (the Root) of a trace header, or "" when it
// has none: what stays the same along one trace, hop after hop.
func TraceID(traceHeader string) string {
	return header.FromString(traceHeader).TraceID
}

// incoming returns the normalised header the context carries, or "".
func incoming(ctx context.Context) string {
	s, _ := ctx.Value(xray.LambdaTraceHeaderKey).(string)
	if s == "" {
		return ""
	}
	h := header.FromString(s)
	if h.TraceID == "" {
		return ""
	}
	return format(h)
}

// format writes a header in the canonical order Root, Parent, Sampled, then any other keys
// (Lineage, ...) sorted, which keeps it stable for storage and comparison.
func format(h *header.Header) string {
	parts := []string{header.RootPrefix + h.TraceID}
	if h.ParentID != "" {
		parts = append(parts, header.ParentPrefix+h.ParentID)
	}
	if h.SamplingDecision != header.Unknown {
		parts = append(parts, string(h.SamplingDecision))
	}
	keys := make([]string, 0, len(h.AdditionalData))
	for k := range h.AdditionalData {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		parts = append(parts, k+"="+h.AdditionalData[k])
	}
	return strings.Join(parts, ";")
}
