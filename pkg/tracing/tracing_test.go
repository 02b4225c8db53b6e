package tracing

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-xray-sdk-go/v2/header"
	"github.com/aws/aws-xray-sdk-go/v2/xray"
)

const (
	upstream = "Root=1-6968b3d8-0123456789abcdef01234567;Parent=0123456789abcdef;Sampled=1"
	lineage  = "Root=1-6968b3d8-0123456789abcdef01234567;Parent=0123456789abcdef;Sampled=1;Lineage=a87bd80c:0"
)

func TestHeaderRoundTripWithoutTracing(t *testing.T) {
	if Enabled() {
		t.Skip("AWS_XRAY_DAEMON_ADDRESS is set")
	}
	ctx := context.Background()
	if got := TraceHeader(ctx); got != "" {
		t.Errorf("no trace: TraceHeader = %q", got)
	}
	for in, want := range map[string]string{
		upstream: upstream,
		lineage:  lineage,
		// other key order and spaces normalise to Root, Parent, Sampled
		"Sampled=0; Parent=0123456789abcdef; Root=1-6968b3d8-0123456789abcdef01234567": "Root=1-6968b3d8-0123456789abcdef01234567;Parent=0123456789abcdef;Sampled=0",
		"Root=1-6968b3d8-0123456789abcdef01234567":                                     "Root=1-6968b3d8-0123456789abcdef01234567",
		"garbage":               "",
		"":                      "",
		"Parent=0123456789abcd": "",
	} {
		if got := TraceHeader(ContextWithHeader(ctx, in)); got != want {
			t.Errorf("TraceHeader(ContextWithHeader(%q)) = %q, want %q", in, got, want)
		}
	}
}

func TestNoOpWithoutTracing(t *testing.T) {
	if Enabled() {
		t.Skip("AWS_XRAY_DAEMON_ADDRESS is set")
	}
	ctx := ContextWithHeader(context.Background(), upstream)
	sctx, end := StartSegment(ctx, "trigger")
	if sctx != ctx {
		t.Error("StartSegment changed the context without tracing")
	}
	end(errors.New("boom"))
	sub, endSub := StartSubsegment(context.Background(), "claim")
	if sub != context.Background() {
		t.Error("StartSubsegment changed the context without tracing")
	}
	endSub(nil)
	Annotate(sctx, "firm_id", "f")
	if got := TraceHeader(sctx); got != upstream {
		t.Errorf("header lost through a no-op segment: %q", got)
	}
	var cfg aws.Config
	InstrumentAWS(&cfg)
	if len(cfg.APIOptions) != 0 {
		t.Errorf("InstrumentAWS added %d options without tracing", len(cfg.APIOptions))
	}
}

// capture is an X-Ray emitter that keeps what would go to the daemon.
type capture struct {
	mu   sync.Mutex
	segs []*xray.Segment
}

func (c *capture) Emit(seg *xray.Segment) {
	c.mu.Lock()
	c.segs = append(c.segs, seg)
	c.mu.Unlock()
}
func (c *capture) RefreshEmitterWithAddress(*net.UDPAddr) {}

// With tracing on, work under an incoming header joins that trace as a child of its Parent, and
// the header handed downstream names the new subsegment as parent.
func TestContinuesIncomingTrace(t *testing.T) {
	old := enabled
	enabled = true
	em := &capture{}
	if err := xray.Configure(xray.Config{Emitter: em}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { enabled = old })

	ctx := ContextWithHeader(context.Background(), lineage)
	ctx, end := StartSegment(ctx, "trigger")
	Annotate(ctx, "matter_id", "m-1")
	down := header.FromString(TraceHeader(ctx))
	up := header.FromString(lineage)
	if down.TraceID != up.TraceID || down.SamplingDecision != header.Sampled {
		t.Errorf("downstream header %+v does not continue %+v", down, up)
	}
	if down.ParentID == "" || down.ParentID == up.ParentID {
		t.Errorf("downstream Parent = %q, want the new subsegment's id", down.ParentID)
	}
	if down.AdditionalData["Lineage"] != "a87bd80c:0" {
		t.Errorf("Lineage dropped: %+v", down)
	}
	var cfg aws.Config
	InstrumentAWS(&cfg)
	if len(cfg.APIOptions) == 0 {
		t.Error("InstrumentAWS added nothing with tracing on")
	}
	end(nil)

	em.mu.Lock()
	defer em.mu.Unlock()
	if len(em.segs) != 1 {
		t.Fatalf("emitted %d segments, want 1", len(em.segs))
	}
	s := em.segs[0]
	if s.Name != "trigger" || s.TraceID != up.TraceID || s.ParentID != up.ParentID || s.ID != down.ParentID {
		t.Errorf("emitted %s trace %s parent %s id %s", s.Name, s.TraceID, s.ParentID, s.ID)
	}

	// An unsampled incoming trace records nothing and hands the header on as it came.
	unsampled := strings.Replace(upstream, "Sampled=1", "Sampled=0", 1)
	uctx, uend := StartSegment(ContextWithHeader(context.Background(), unsampled), "trigger")
	if got := TraceHeader(uctx); got != unsampled {
		t.Errorf("unsampled: TraceHeader = %q, want %q", got, unsampled)
	}
	uend(nil)
	if len(em.segs) != 1 {
		t.Errorf("an unsampled trace was emitted")
	}

	// No trace at all: a subsegment has nothing to attach to and is a quiet no-op.
	bg := context.Background()
	if c, e := StartSubsegment(bg, "orphan"); c != bg {
		t.Error("orphan subsegment changed the context")
	} else {
		e(nil)
	}
}
