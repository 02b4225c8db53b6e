package lambdafn

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/pramaan/brief-rail/pkg/aws/sqsq"
	"github.com/pramaan/brief-rail/pkg/emf"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
	"github.com/pramaan/brief-rail/pkg/tracing"
)

// Metric names written by the handlers (template.yaml's dashboard and
// alarms read them).
const (
	MetricOutboxBacklog               = "OutboxBacklog"
	MetricOutboxOldestAgeSeconds      = "OutboxOldestAgeSeconds"
	MetricOutboxParked                = "OutboxParked"
	MetricEventsPublished             = "EventsPublished"
	MetricPublishFailures             = "PublishFailures"
	MetricClaims                      = "Claims"
	MetricFramesLanded                = "FramesLanded"
	MetricCommitsFenced               = "CommitsFenced"
	MetricBuildsFailed                = "BuildsFailed"
	MetricMattersQuarantined          = "MattersQuarantined"
	MetricBuildDurationSeconds        = "BuildDurationSeconds"
	MetricMattersBehind               = "MattersBehind"
	MetricOldestUnservedDemandSeconds = "OldestUnservedDemandSeconds"
	MetricLeaseExpiries               = "LeaseExpiries"
	MetricMattersClosedWithDemand     = "MattersClosedWithDemand" // demand held by closed matters (not late)
	// MetricDemandToCurrentSeconds: one sample per live demand a landed
	// frame served, from its oldest fact's occurred_at (the upload) to the
	// commit; the dashboard graphs its p50/p99 and an alarm holds the p99
	// to the SLO (DemandToCurrentP99SloSeconds).
	MetricDemandToCurrentSeconds = "DemandToCurrentSeconds"
	// MetricBackfillToCurrentSeconds: the same for backfill demand (kept
	// apart so a backfill never moves the live SLO).
	MetricBackfillToCurrentSeconds = "BackfillToCurrentSeconds"
	MetricMattersOutdated          = "MattersOutdated"  // open matters built by another builder identity
	MetricBackfillAdmitted         = "BackfillAdmitted" // backfill builds admitted this pass
	MetricBackfillPaused           = "BackfillPaused"   // 1 while paused
)

const attrTraceHeader = "AWSTraceHeader"

func flush(ctx context.Context, m *emf.Logger, log *slog.Logger) {
	if id := requestID(ctx); id != "" {
		m.SetProperty("request_id", id)
	}
	if err := m.Flush(); err != nil {
		log.WarnContext(ctx, "metrics not written", "err", err)
	}
}

// ---------------------------------------------------------------- trigger

// TriggerHandler is the trigger function: SQS batches from the trigger
// queue, each body an EventBridge envelope.
type TriggerHandler struct {
	Trigger *rail.Trigger
	// Source is the only envelope source taken (the relay's,
	// RAIL_EVENT_SOURCE): any other fails its message alone.
	Source  string
	Metrics *emf.Logger
	Log     *slog.Logger
}

// NewTrigger wires the trigger from cfg and d.
func NewTrigger(cfg Config, d Deps) *TriggerHandler {
	m := d.metrics()
	return &TriggerHandler{
		Trigger: &rail.Trigger{Ledger: postgres.NewLedger(d.Pool, cfg.RailConfig()), Nudger: d.nudger(cfg),
			SettleDelay: cfg.SettleDelay, Log: d.log(), Metrics: m},
		Source:  cfg.EventSource,
		Metrics: m, Log: d.log(),
	}
}

// Handle processes one batch and reports the messages to retry
// (ReportBatchItemFailures): one bad message never fails the others. It
// returns an error only for a batch it could not look at.
func (h *TriggerHandler) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	ctx, end := tracing.StartSegment(ctx, "trigger")
	defer flush(ctx, h.Metrics, h.Log)
	msgs := make([]rail.InboundFact, len(ev.Records))
	for i, r := range ev.Records {
		msgs[i] = rail.InboundFact{MessageID: r.MessageId, TraceHeader: r.Attributes[attrTraceHeader]}
		env, err := sqsq.DecodeRailEnvelope(r.Body, h.Source)
		if err != nil {
			msgs[i].Err = fmt.Errorf("%w (receive %s; dead-lettered after the queue's maxReceiveCount)",
				err, r.Attributes["ApproximateReceiveCount"])
			continue
		}
		msgs[i].Fact = env.Detail
	}
	var resp events.SQSEventResponse
	for i, err := range h.Trigger.Handle(ctx, msgs) {
		if err != nil {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: ev.Records[i].MessageId})
		}
	}
	end(nil)
	return resp, nil
}

// ---------------------------------------------------------------- builder

// BuilderHandler is the builder function: batches of nudges from the build
// and backfill queues (the template's BatchSize), served together.
type BuilderHandler struct {
	Worker rail.Worker // copied per invocation (its ID is the request id)
	Nudger rail.Nudger // for the follow-up nudge
	// FollowUpDelay is the follow-up nudge's delay (the settle delay).
	FollowUpDelay time.Duration
	// Reserve is the time kept back after the build for recording its
	// outcome: the build's deadline is the invocation's deadline (and the
	// end of the lease) less Reserve, so the commit or Fail, each bounded
	// by the worker's CommitTimeout on a context detached from the build,
	// and the follow-up nudge still run inside the invocation. Zero:
	// DefaultReserve(the worker's CommitTimeout).
	Reserve time.Duration
	// MinBuild: a nudge that arrives with less than Reserve+MinBuild left
	// of the invocation is not started (nothing is claimed) and is handed
	// back for redelivery. Zero: DefaultMinBuild.
	MinBuild time.Duration
	// Reverts.NoRetryNudge: no nudge for the end of a failed build's
	// backoff (the simulation's negative control); zero in production.
	Reverts rail.Reverts
	Metrics *emf.Logger
	Log     *slog.Logger
}

// MaxNudgeDelay is the longest delay a nudge can carry (SQS DelaySeconds
// is at most 900). A backoff longer than that is nudged at this delay; the
// claim then finds the row still backing off, and the sweeper re-nudges it
// once its backoff and grace are over.
const MaxNudgeDelay = 900 * time.Second

// DefaultMinBuild is the least build time a nudge is started with.
const DefaultMinBuild = 15 * time.Second

// DefaultReserve is the time a build leaves for its outcome when
// BuilderHandler.Reserve is zero: two outcome statements (a commit, and
// the landed check after an ambiguous one) and five seconds for the
// follow-up nudge.
func DefaultReserve(commitTimeout time.Duration) time.Duration {
	if commitTimeout <= 0 {
		commitTimeout = rail.DefaultCommitTimeout
	}
	return 2*commitTimeout + 5*time.Second
}

// ErrNoTimeToBuild: the invocation had too little time left to build and
// record the outcome; the nudge was handed back untouched.
var ErrNoTimeToBuild = errors.New("too little time left in the invocation to build")

// NewBuilder wires the builder from cfg and d with the Brief builder fb.
func NewBuilder(cfg Config, d Deps, fb rail.FrameBuilder) *BuilderHandler {
	return &BuilderHandler{
		Worker: rail.Worker{Ledger: postgres.NewLedger(d.Pool, cfg.RailConfig()), Builder: fb, Log: d.log(),
			CommitTimeout: cfg.CommitTimeout},
		Nudger:        d.nudger(cfg),
		FollowUpDelay: cfg.SettleDelay,
		Reserve:       cmp.Or(cfg.BuildReserve, DefaultReserve(cfg.CommitTimeout)),
		MinBuild:      DefaultMinBuild,
		Reverts:       d.Reverts,
		Metrics:       d.metrics(), Log: d.log(),
	}
}

// Handle serves the batch's nudges together: one claim statement for the
// whole batch (a loser exits quietly: the row already holds its demand),
// every claimed matter built concurrently under its own heartbeat and
// deadline, each committed (fenced) as soon as its build finishes, and
// exactly one follow-up nudge per matter whose demand arrived during its
// build. Failures are per record (ReportBatchItemFailures): a malformed
// nudge, a build whose outcome is unknown (database error), or a batch
// that arrived with too little of the invocation left is reported for
// retry; a build that failed is recorded in the ledger and acknowledged
// (the ledger retries it with backoff). A nudge whose matter another nudge
// of the batch names is served by that one's build and acknowledged.
func (h *BuilderHandler) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	defer flush(ctx, h.Metrics, h.Log)
	errs := make([]error, len(ev.Records))
	h.batch(ctx, ev.Records, errs)
	var resp events.SQSEventResponse
	for i, r := range ev.Records {
		if err := errs[i]; err != nil {
			level := slog.LevelError
			if errors.Is(err, ErrNoTimeToBuild) {
				level = slog.LevelWarn
			}
			h.Log.Log(ctx, level, "nudge not handled; it will be retried", "message_id", r.MessageId,
				"receive_count", r.Attributes["ApproximateReceiveCount"], "err", err)
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
		}
	}
	return resp, nil
}

// budget returns the reserve and the least build time in effect.
func (h *BuilderHandler) budget() (reserve, minBuild time.Duration) {
	reserve, minBuild = h.Reserve, h.MinBuild
	if reserve <= 0 {
		reserve = DefaultReserve(h.Worker.CommitTimeout)
	}
	if minBuild <= 0 {
		minBuild = DefaultMinBuild
	}
	return reserve, minBuild
}

// buildDeadline is when a build started now must end: the lease's end and
// the invocation's deadline, less the reserve for the outcome. It returns
// ErrNoTimeToBuild when the invocation has less than reserve+MinBuild left.
func (h *BuilderHandler) buildDeadline(ctx context.Context, lease time.Duration) (time.Time, error) {
	reserve, minBuild := h.budget()
	now := time.Now()
	stop := now.Add(lease - reserve)
	dl, ok := ctx.Deadline()
	if !ok {
		return stop, nil
	}
	if left := dl.Sub(now); left < reserve+minBuild {
		return time.Time{}, fmt.Errorf("%w: %s left, a build needs %s plus %s for its outcome",
			ErrNoTimeToBuild, left.Round(time.Millisecond), minBuild, reserve)
	}
	return minTime(stop, dl.Add(-reserve)), nil
}

// nudgeCtx is one record's nudge and the context its build runs on.
type nudgeCtx struct {
	nd  rail.Nudge
	ctx context.Context
	end func(error)
	log *slog.Logger
}

// batch serves records, setting errs[i] for each record to retry.
func (h *BuilderHandler) batch(ctx context.Context, records []events.SQSMessage, errs []error) {
	w := h.Worker
	w.ID = "builder"
	if id := requestID(ctx); id != "" {
		w.ID += ":" + id
	}
	lease := w.Ledger.Config().Lease
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) >= lease {
		h.Log.ErrorContext(ctx, "function timeout is not below RAIL_LEASE: a live build could be taken over; building only within the lease",
			"lease", lease.String(), "remaining", time.Until(dl).String())
	}
	var (
		nudges []nudgeCtx
		index  []int // record index of each nudge
		items  []rail.BatchItem
	)
	for i, r := range records {
		nd, err := sqsq.DecodeNudge(r.Body)
		if err != nil {
			errs[i] = err
			continue
		}
		nctx := tracing.ContextWithHeader(ctx, r.Attributes[attrTraceHeader])
		nctx, end := tracing.StartSegment(nctx, "build")
		tracing.Annotate(nctx, "firm_id", nd.FirmID.String())
		tracing.Annotate(nctx, "matter_id", nd.MatterID.String())
		nudges = append(nudges, nudgeCtx{nd: nd, ctx: nctx, end: end,
			log: h.Log.With("firm_id", nd.FirmID, "matter_id", nd.MatterID, "reason", nd.Reason)})
		index = append(index, i)
	}
	if len(nudges) == 0 {
		return
	}
	// Every build of the batch starts once the batch is claimed, so one
	// deadline serves them all: the lease's end (it starts at the claim,
	// after now) and the invocation's, less the reserve for the outcome.
	stop, err := h.buildDeadline(ctx, lease)
	for k, n := range nudges {
		if err != nil {
			errs[index[k]] = fmt.Errorf("build %s: %w", n.nd.Ref(), err)
			n.end(errs[index[k]])
			continue
		}
		bctx, cancel := context.WithDeadline(n.ctx, stop)
		defer cancel()
		items = append(items, rail.BatchItem{Ref: n.nd.Ref(), Ctx: bctx, TraceHeader: tracing.TraceHeader(n.ctx),
			Log: h.Log.With("reason", n.nd.Reason)}) // the worker adds firm, matter and token itself
	}
	if err != nil {
		return
	}
	w.Log = h.Log
	_, _, err = w.BuildBatch(ctx, items, func(k int, out rail.Outcome, err error) {
		n := nudges[k]
		if err != nil {
			err = fmt.Errorf("build %s: %w", n.nd.Ref(), err)
		} else {
			h.served(n.ctx, n.log, n.nd, out)
		}
		errs[index[k]] = err
		n.end(err)
	})
	if err != nil {
		for k, n := range nudges {
			errs[index[k]] = fmt.Errorf("build %s: %w", n.nd.Ref(), err)
			n.end(errs[index[k]])
		}
	}
}

// served records what one nudge's build did (metrics, logs) and sends its
// follow-up or retry nudge. It runs on the build's own goroutine.
func (h *BuilderHandler) served(ctx context.Context, log *slog.Logger, nd rail.Nudge, out rail.Outcome) {
	if !out.Claimed {
		log.InfoContext(ctx, "nothing to claim: no unserved demand, or a live claim will follow up")
		return
	}
	h.Metrics.Count(MetricClaims, 1)
	tracing.Annotate(ctx, "token", out.Claim.Token)
	switch {
	case out.Landed:
		h.Metrics.Count(MetricFramesLanded, 1)
		h.Metrics.Duration(MetricBuildDurationSeconds, out.Duration)
		ObserveServed(h.Metrics, out.Served)
		if len(out.Served) > 0 {
			ages := make([]string, len(out.Served))
			for i, d := range out.Served {
				ages[i] = fmt.Sprintf("g%d:%s:%.3fs", d.Generation, d.Source, d.AgeSeconds)
			}
			log.InfoContext(ctx, "demands served: upload -> current", "token", out.Claim.Token, "served", strings.Join(ages, " "))
		}
	case out.Fenced:
		h.Metrics.Count(MetricCommitsFenced, 1)
	case out.Failed:
		h.Metrics.Count(MetricBuildsFailed, 1)
		// A backfill build's retry is the sweeper's: the builder nudges the
		// live queue only, and backfill work never goes there (issue 18,
		// defect 4); the sweeper re-nudges the matter once its backoff and
		// grace are over, onto the backfill queue while its demand is the
		// backfill's alone, onto the live queue if live demand came since.
		if !out.Quarantined && !h.Reverts.NoRetryNudge && nd.Reason != rail.ReasonBackfill {
			h.retry(ctx, log, nd, out)
		}
	}
	if out.FollowUpDue {
		fu := rail.Nudge{V: 1, FirmID: nd.FirmID, MatterID: nd.MatterID, Reason: rail.ReasonFollowUp, TraceHeader: tracing.TraceHeader(ctx)}
		if err := h.Nudger.Nudge(ctx, []rail.Nudge{fu}, h.FollowUpDelay); err != nil {
			log.WarnContext(ctx, "follow-up nudge not sent; the sweeper will re-nudge", "token", out.Claim.Token, "err", err)
		} else {
			log.InfoContext(ctx, "follow-up nudged: demand arrived during the build", "token", out.Claim.Token)
		}
	}
}

// retry nudges a failed build's matter for the end of its backoff (the
// ledger's Fail set not_before to it): without it the retry would wait for
// the sweeper's grace. A nudge that cannot be sent is logged; the sweeper
// re-nudges the matter once its backoff and grace are over.
func (h *BuilderHandler) retry(ctx context.Context, log *slog.Logger, nd rail.Nudge, out rail.Outcome) {
	if h.Nudger == nil {
		return
	}
	delay := min(h.Worker.Ledger.Config().Backoff(out.Claim.Attempt), MaxNudgeDelay)
	n := rail.Nudge{V: 1, FirmID: nd.FirmID, MatterID: nd.MatterID, Reason: rail.ReasonRetry, TraceHeader: tracing.TraceHeader(ctx)}
	if err := h.Nudger.Nudge(ctx, []rail.Nudge{n}, delay); err != nil {
		log.WarnContext(ctx, "retry nudge not sent; the sweeper will re-nudge", "token", out.Claim.Token, "err", err)
		return
	}
	log.InfoContext(ctx, "retry nudged for the end of the backoff", "token", out.Claim.Token, "delay", delay.String())
}

// ObserveServed records one latency sample per demand a frame served:
// DemandToCurrentSeconds for live demand, BackfillToCurrentSeconds for the
// backfill's.
func ObserveServed(m *emf.Logger, served []rail.ServedDemand) {
	for _, d := range served {
		name := MetricDemandToCurrentSeconds
		if d.Source == rail.DemandFromBackfill {
			name = MetricBackfillToCurrentSeconds
		}
		m.Observe(name, d.AgeSeconds, emf.Seconds)
	}
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// ---------------------------------------------------------------- schedules

// ScheduleEvent is the Input the template's schedules send:
// {"source":"brief-rail.schedule","task":"relay"}.
type ScheduleEvent struct {
	Source string `json:"source"`
	Task   string `json:"task"`
}

func (e ScheduleEvent) check(fn string) error {
	if e.Task != "" && e.Task != fn {
		return fmt.Errorf("lambdafn: the %s function was invoked with task %q: check the schedule's Input", fn, e.Task)
	}
	return nil
}

// ---------------------------------------------------------------- relay

// RelayHandler is the relay function: one invocation a minute drains the
// outbox for about Window.
type RelayHandler struct {
	Relay  *rail.Relay
	Window time.Duration
	Poll   time.Duration // zero: the relay's default
	// Margin: the window ends this long before the invocation deadline.
	Margin  time.Duration
	Metrics *emf.Logger
	Log     *slog.Logger
}

// NewRelay wires the relay from cfg and d.
func NewRelay(cfg Config, d Deps) *RelayHandler {
	return &RelayHandler{
		Relay:  &rail.Relay{Outbox: postgres.NewOutbox(d.Pool), Publisher: d.publisher(cfg), Log: d.log()},
		Window: cfg.RelayWindow, Margin: 5 * time.Second, Metrics: d.metrics(), Log: d.log(),
	}
}

// RelayResult is what an invocation returns (visible in sam local invoke).
type RelayResult struct {
	Published        int     `json:"published"`
	Failed           int     `json:"failed"`
	Parked           int     `json:"parked"`
	ParkedTotal      int64   `json:"parked_total"`
	Backlog          int64   `json:"backlog"`
	OldestAgeSeconds float64 `json:"oldest_age_seconds"`
	// LeaseBusy: passes that found another relay holding the relay lease
	// (they read nothing); Takeovers: leases taken from a holder that had
	// not released it; FencedOut: failure records refused because the
	// lease had been taken over meanwhile.
	LeaseBusy int `json:"lease_busy"`
	Takeovers int `json:"takeovers"`
	FencedOut int `json:"fenced_out"`
}

// Handle drains for the window, bounded by the invocation's deadline less
// the margin, and reports the outbox gauges. When the database cannot be
// reached (no pass succeeded, or the backlog could not be read) the
// invocation fails and no gauge is written: a missing datapoint, never a
// false zero.
func (h *RelayHandler) Handle(ctx context.Context, ev ScheduleEvent) (RelayResult, error) {
	if err := ev.check(Relay); err != nil {
		return RelayResult{}, err
	}
	ctx, end := tracing.StartSegment(ctx, "relay")
	defer flush(ctx, h.Metrics, h.Log)
	window := h.Window
	if dl, ok := ctx.Deadline(); ok {
		window = min(window, time.Until(dl)-h.Margin)
	}
	if window <= 0 {
		window = time.Millisecond // one pass
	}
	st, err := h.Relay.Run(ctx, window, h.Poll)
	h.Metrics.Count(MetricEventsPublished, float64(st.Published))
	h.Metrics.Count(MetricPublishFailures, float64(st.Failed))
	if st.Measured {
		h.Metrics.Gauge(MetricOutboxBacklog, float64(st.Backlog), emf.Count)
		h.Metrics.Gauge(MetricOutboxOldestAgeSeconds, st.OldestAgeSeconds, emf.Seconds)
		h.Metrics.Gauge(MetricOutboxParked, float64(st.ParkedTotal), emf.Count)
	}
	res := RelayResult{Published: st.Published, Failed: st.Failed, Parked: st.Parked, ParkedTotal: st.ParkedTotal,
		Backlog: st.Backlog, OldestAgeSeconds: st.OldestAgeSeconds,
		LeaseBusy: st.LeaseBusy, Takeovers: st.Takeovers, FencedOut: st.FencedOut}
	h.Log.InfoContext(ctx, "relay window done", "passes", st.Passes, "published", st.Published, "failed", st.Failed,
		"parked", st.Parked, "parked_total", st.ParkedTotal, "backlog", st.Backlog, "oldest_age_s", st.OldestAgeSeconds,
		"measured", st.Measured, "lease_busy", st.LeaseBusy, "takeovers", st.Takeovers, "fenced_out", st.FencedOut)
	if errors.Is(err, context.DeadlineExceeded) && st.Measured && !errors.Is(err, rail.ErrRelayNoProgress) {
		err = nil // the invocation's own deadline: the window simply ended
	}
	end(err)
	return res, err
}

// ---------------------------------------------------------------- sweeper

// SweeperHandler is the sweeper function: once a minute it runs one
// rail.Sweeper pass (quarantine, expiries, re-nudges, gauges, backfill,
// pruning) and writes the metrics of every part the pass measured (zero
// included, so a silent sweeper is visible as missing data; a part that
// failed writes none, never a false zero).
type SweeperHandler struct {
	Sweeper *rail.Sweeper
	// Margin: the pass ends this long before the invocation's deadline, so
	// a slow statement cannot take the pass's metrics down with it.
	Margin  time.Duration
	Metrics *emf.Logger
	Log     *slog.Logger
}

// NewSweeper wires the sweeper from cfg and d.
func NewSweeper(cfg Config, d Deps) *SweeperHandler {
	l := postgres.NewLedger(d.Pool, cfg.RailConfig())
	s := &rail.Sweeper{
		Ledger: l,
		Housekeeping: &postgres.Housekeeping{Q: d.Pool, OutboxRetention: cfg.OutboxRetention,
			InboxRetention: cfg.InboxRetention, Frames: cfg.FramePolicy()},
		Nudger: d.nudger(cfg), BackfillNudger: d.backfillNudger(cfg),
		TraceHeader: tracing.TraceHeader, Reverts: d.Reverts, Log: d.log(),
	}
	if deployed, _ := cfg.DeployedIdentity(); deployed.Name != "" { // LoadConfig checked it for the sweeper
		// Without a backfill queue the backfill only counts (MattersOutdated).
		s.Backfill = &rail.Backfill{Ledger: l, Deployed: deployed, Rate: cfg.BackfillRate, Nudger: s.BackfillNudger,
			Concurrency: cfg.BackfillConcurrency, Reverts: d.Reverts, Log: d.log()}
	}
	return &SweeperHandler{Sweeper: s, Margin: 5 * time.Second, Metrics: d.metrics(), Log: d.log()}
}

// SweepResult is what an invocation returns.
type SweepResult struct {
	Renudged         int               `json:"renudged"`
	RenudgedBackfill int               `json:"renudged_backfill"` // backfill-only demand, onto the backfill queue
	Quarantined      int               `json:"quarantined"`
	LeaseExpiries    int               `json:"lease_expiries"`
	OutboxPruned     int64             `json:"outbox_pruned"`
	OutboxPruneLeft  int64             `json:"outbox_prune_left"` // prunable rows left for the next run
	InboxPruned      int64             `json:"inbox_pruned"`
	FramesPruned     rail.FramesPruned `json:"frames_pruned"`
	MattersBehind    int               `json:"matters_behind"`
	OutboxBacklog    int64             `json:"outbox_backlog"`
	QuarantinedNow   int               `json:"matters_quarantined"`
	// The gauges' other values, as written (OldestUnservedDemandSeconds,
	// MattersClosedWithDemand, OutboxOldestAgeSeconds, OutboxParked).
	OldestUnservedDemandSeconds float64 `json:"oldest_unserved_demand_seconds"`
	MattersClosedWithDemand     int     `json:"matters_closed_with_demand"`
	OutboxOldestAgeSeconds      float64 `json:"outbox_oldest_age_seconds"`
	OutboxParked                int64   `json:"outbox_parked"`
	RecordsPruned               int64   `json:"records_pruned"` // demand and nudge records past RAIL_INBOX_RETENTION
	Outdated                    int     `json:"matters_outdated"`
	Backfilled                  int     `json:"backfill_admitted"`
	BackfillInFlight            int     `json:"backfill_in_flight"`
	BackfillServed              int     `json:"backfill_served"` // backfill demand served in the last rail.BackfillWindow, before the pass
	BackfillPaused              bool    `json:"backfill_paused"`
	BuildersRecorded            int64   `json:"builders_recorded"` // ledger rows given their newest frame's builder identity
	// FailedSteps names the pass's steps that failed (their errors are the
	// invocation's error); the other steps ran and their metrics were written.
	FailedSteps []string `json:"failed_steps,omitempty"`
}

// Handle runs one sweep pass, bounded by the invocation's deadline less
// Margin. Every step runs even if an earlier one failed; the errors are
// returned together (the invocation fails and alarms) and the metrics of
// the steps that succeeded are written.
func (h *SweeperHandler) Handle(ctx context.Context, ev ScheduleEvent) (SweepResult, error) {
	if err := ev.check(Sweeper); err != nil {
		return SweepResult{}, err
	}
	ctx, end := tracing.StartSegment(ctx, "sweeper")
	defer flush(ctx, h.Metrics, h.Log)
	pctx := ctx
	if dl, ok := ctx.Deadline(); ok && h.Margin > 0 {
		var cancel context.CancelFunc
		pctx, cancel = context.WithDeadline(ctx, dl.Add(-h.Margin))
		defer cancel()
	}
	pass, err := h.Sweeper.Pass(pctx)
	res := h.report(pass)
	h.Log.InfoContext(ctx, "sweep done", "renudged", res.Renudged, "renudged_backfill", res.RenudgedBackfill,
		"quarantined", res.Quarantined, "lease_expiries", res.LeaseExpiries, "matters_behind", res.MattersBehind,
		"outbox_pruned", res.OutboxPruned, "outbox_prune_left", res.OutboxPruneLeft,
		"inbox_pruned", res.InboxPruned, "frames_pruned", res.FramesPruned.Frames, "failed_steps", res.FailedSteps,
		"step_seconds", stepSeconds(pass.Took), "err", errString(err))
	end(err)
	return res, err
}

// stepSeconds renders each step's duration for the log line.
func stepSeconds(took map[string]time.Duration) map[string]float64 {
	out := make(map[string]float64, len(took))
	for k, d := range took {
		out[k] = math.Round(d.Seconds()*1000) / 1000
	}
	return out
}

// report writes the pass's metrics (only what it measured) and returns the
// invocation's result.
func (h *SweeperHandler) report(p rail.SweepPass) SweepResult {
	res := SweepResult{Renudged: len(p.Renudged), RenudgedBackfill: len(p.RenudgedBackfill),
		Quarantined: len(p.Quarantined), LeaseExpiries: p.LeaseExpiries,
		OutboxPruned: p.OutboxPruned, OutboxPruneLeft: p.OutboxPruneLeft, InboxPruned: p.InboxPruned,
		RecordsPruned: p.RecordsPruned, FramesPruned: p.FramesPruned, BuildersRecorded: p.BuildersRecorded, FailedSteps: p.Failed}
	if !p.StepFailed(rail.StepExpiredLeases) {
		h.Metrics.Count(MetricLeaseExpiries, float64(p.LeaseExpiries))
	}
	if g := p.Gauges; g != nil {
		res.MattersBehind, res.QuarantinedNow = g.MattersBehind, g.MattersQuarantined
		res.OldestUnservedDemandSeconds, res.MattersClosedWithDemand = g.OldestUnservedDemandSeconds, g.MattersClosedWithDemand
		h.Metrics.Gauge(MetricMattersBehind, float64(g.MattersBehind), emf.Count)
		h.Metrics.Gauge(MetricMattersQuarantined, float64(g.MattersQuarantined), emf.Count)
		h.Metrics.Gauge(MetricOldestUnservedDemandSeconds, g.OldestUnservedDemandSeconds, emf.Seconds)
		h.Metrics.Gauge(MetricMattersClosedWithDemand, float64(g.MattersClosedWithDemand), emf.Count)
	}
	if b := p.Backfill; b != nil {
		res.Outdated = b.Outdated
		h.Metrics.Gauge(MetricMattersOutdated, float64(b.Outdated), emf.Count)
		if !b.CountOnly {
			res.Backfilled, res.BackfillInFlight, res.BackfillServed, res.BackfillPaused = len(b.Admitted), b.InFlight, b.Served, b.Paused
			h.Metrics.Count(MetricBackfillAdmitted, float64(len(b.Admitted)))
			paused := 0.0
			if b.Paused {
				paused = 1
			}
			h.Metrics.Gauge(MetricBackfillPaused, paused, emf.Count)
		}
	}
	// The relay reports the outbox too; the sweeper reporting it as well
	// keeps the OutboxOldestAge alarm alive when the relay is not running.
	if g := p.Outbox; g != nil {
		res.OutboxBacklog, res.OutboxOldestAgeSeconds, res.OutboxParked = g.Backlog, g.OldestAgeSeconds, g.Parked
		h.Metrics.Gauge(MetricOutboxBacklog, float64(g.Backlog), emf.Count)
		h.Metrics.Gauge(MetricOutboxOldestAgeSeconds, g.OldestAgeSeconds, emf.Seconds)
		h.Metrics.Gauge(MetricOutboxParked, float64(g.Parked), emf.Count)
	}
	return res
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// ErrBadScheduleInput: a schedule input that is not a JSON object with
// string (or absent) "source" and "task".
var ErrBadScheduleInput = errors.New("lambdafn: bad schedule input")

// DecodeSchedule parses a schedule input (for tests and local runs; Lambda
// decodes it itself, the same way: encoding/json into ScheduleEvent). An
// input it refuses is an ErrBadScheduleInput.
func DecodeSchedule(b []byte) (ScheduleEvent, error) {
	var e ScheduleEvent
	if err := json.Unmarshal(b, &e); err != nil {
		return ScheduleEvent{}, fmt.Errorf("%w: %w", ErrBadScheduleInput, err)
	}
	return e, nil
}
