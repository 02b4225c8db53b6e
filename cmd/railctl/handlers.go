package main

import (
	"context"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"

	"github.com/pramaan/brief-rail/pkg/rail"
	"github.com/pramaan/brief-rail/pkg/sqsq"
)

// The SQS handlers the local runner drives, with the Lambda signature
// (ReportBatchItemFailures). They are the glue functions/trigger and
// functions/builder run: decode with pkg/sqsq, act with pkg/rail.
// TODO(issue 4): replace with pkg/railfn's TriggerHandler and
// BuilderHandler when the lambda branch lands them, so the local rail runs
// the Lambdas' own code.

// triggerHandler decodes EventBridge envelopes and hands the batch to
// rail.Trigger; each message the trigger fails is reported as a batch item
// failure (redelivered, then dead-lettered), the rest are acknowledged.
func triggerHandler(t *rail.Trigger) func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
	return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		in := make([]rail.InboundFact, len(ev.Records))
		for i, r := range ev.Records {
			env, err := sqsq.DecodeEnvelope(r.Body)
			in[i] = rail.InboundFact{MessageID: r.MessageId, Fact: env.Detail, Err: err, TraceHeader: r.Attributes["AWSTraceHeader"]}
		}
		var resp events.SQSEventResponse
		for i, err := range t.Handle(ctx, in) {
			if err != nil {
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: ev.Records[i].MessageId})
			}
		}
		return resp, nil
	}
}

// builderHandler runs one BuildOnce per nudge. A nudge that finds nothing
// to claim is acknowledged (the row already holds its demand); a landed
// frame with demand that arrived during the build sends one follow-up nudge.
// A malformed nudge or a database error fails that message alone.
func builderHandler(w *rail.Worker, nudger rail.Nudger, log *slog.Logger) func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
	return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		var resp events.SQSEventResponse
		fail := func(r events.SQSMessage) {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
		}
		for _, r := range ev.Records {
			nd, err := sqsq.DecodeNudge(r.Body)
			if err != nil {
				log.ErrorContext(ctx, "malformed nudge: failing it (retried, then dead-lettered)", "message_id", r.MessageId, "err", err)
				fail(r)
				continue
			}
			ref := nd.Ref()
			out, err := w.BuildOnce(ctx, ref)
			if err != nil {
				log.ErrorContext(ctx, "build attempt failed; the nudge will be retried", "firm_id", ref.FirmID,
					"matter_id", ref.MatterID, "err", err)
				fail(r)
				continue
			}
			if !out.Claimed {
				log.InfoContext(ctx, "nothing to claim: no unserved demand or a live claim (nudge acknowledged)",
					"matter_id", ref.MatterID, "reason", nd.Reason)
				continue
			}
			if out.FollowUpDue {
				fu := rail.Nudge{V: 1, FirmID: ref.FirmID, MatterID: ref.MatterID, Reason: rail.ReasonFollowUp, TraceHeader: nd.TraceHeader}
				if err := nudger.Nudge(ctx, []rail.Nudge{fu}, 0); err != nil {
					log.ErrorContext(ctx, "follow-up nudge failed; the sweeper will re-nudge", "matter_id", ref.MatterID, "err", err)
				}
			}
		}
		return resp, nil
	}
}
