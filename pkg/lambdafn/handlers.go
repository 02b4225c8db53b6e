package lambdafn

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/jackc/pgx/v5/pgxpool"

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

// BuilderHandler is the builder function: nudges from the build queue
// (batch size 1 in the template; larger batches work).
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
	Metrics  *emf.Logger
	Log      *slog.Logger
}

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
		Metrics:       d.metrics(), Log: d.log(),
	}
}

// Handle builds each nudged matter once: claim (a loser exits quietly: the
// row already holds its demand), build under heartbeats, fenced commit, and
// exactly one follow-up nudge when demand arrived during the build. A
// malformed nudge, a build whose outcome is unknown (database error), or a
// nudge that arrived with too little of the invocation left is reported for
// retry; a build that failed is recorded in the ledger and acknowledged
// (the ledger retries it with backoff).
func (h *BuilderHandler) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	defer flush(ctx, h.Metrics, h.Log)
	var resp events.SQSEventResponse
	for _, r := range ev.Records {
		if err := h.one(ctx, r); err != nil {
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

func (h *BuilderHandler) one(ctx context.Context, r events.SQSMessage) (err error) {
	nd, err := sqsq.DecodeNudge(r.Body)
	if err != nil {
		return err
	}
	ctx = tracing.ContextWithHeader(ctx, r.Attributes[attrTraceHeader])
	ctx, end := tracing.StartSegment(ctx, "build")
	defer func() { end(err) }()
	tracing.Annotate(ctx, "firm_id", nd.FirmID.String())
	tracing.Annotate(ctx, "matter_id", nd.MatterID.String())
	log := h.Log.With("firm_id", nd.FirmID, "matter_id", nd.MatterID, "reason", nd.Reason)

	w := h.Worker
	w.ID = "builder"
	if id := requestID(ctx); id != "" {
		w.ID += ":" + id
	}
	w.Log = h.Log.With("reason", nd.Reason)  // the worker adds firm, matter and token itself
	w.TraceHeader = tracing.TraceHeader(ctx) // frame.built continues the nudge's trace
	lease := w.Ledger.Config().Lease
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) >= lease {
		log.ErrorContext(ctx, "function timeout is not below RAIL_LEASE: a live build could be taken over; building only within the lease",
			"lease", lease.String(), "remaining", time.Until(dl).String())
	}
	stop, err := h.buildDeadline(ctx, lease)
	if err != nil {
		return fmt.Errorf("build %s: %w", nd.Ref(), err)
	}
	bctx, cancel := context.WithDeadline(ctx, stop)
	defer cancel()

	out, err := w.BuildOnce(bctx, nd.Ref())
	if err != nil {
		return fmt.Errorf("build %s: %w", nd.Ref(), err)
	}
	if !out.Claimed {
		log.InfoContext(ctx, "nothing to claim: no unserved demand, or a live claim will follow up")
		return nil
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
	}
	if out.FollowUpDue {
		fu := rail.Nudge{V: 1, FirmID: nd.FirmID, MatterID: nd.MatterID, Reason: rail.ReasonFollowUp, TraceHeader: tracing.TraceHeader(ctx)}
		if err := h.Nudger.Nudge(ctx, []rail.Nudge{fu}, h.FollowUpDelay); err != nil {
			log.WarnContext(ctx, "follow-up nudge not sent; the sweeper will re-nudge", "token", out.Claim.Token, "err", err)
		} else {
			log.InfoContext(ctx, "follow-up nudged: demand arrived during the build", "token", out.Claim.Token)
		}
	}
	return nil
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
		Relay:  &rail.Relay{Outbox: postgres.NewOutbox(d.Pool), Publisher: d.publisher(cfg), IdleTimeout: cfg.RelayIdleTimeout, Log: d.log()},
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
		Backlog: st.Backlog, OldestAgeSeconds: st.OldestAgeSeconds}
	h.Log.InfoContext(ctx, "relay window done", "passes", st.Passes, "published", st.Published, "failed", st.Failed,
		"parked", st.Parked, "parked_total", st.ParkedTotal, "backlog", st.Backlog, "oldest_age_s", st.OldestAgeSeconds,
		"measured", st.Measured)
	if errors.Is(err, context.DeadlineExceeded) && st.Measured && !errors.Is(err, rail.ErrRelayNoProgress) {
		err = nil // the invocation's own deadline: the window simply ended
	}
	end(err)
	return res, err
}

// ---------------------------------------------------------------- sweeper

// SweeperHandler is the sweeper function: once a minute it quarantines
// poison matters, re-nudges unserved demand whose nudge was lost, prunes the
// outbox and the trigger inbox, and emits the freshness gauges (every run,
// zero included, so a silent sweeper is visible as missing data).
type SweeperHandler struct {
	Ledger          *postgres.Ledger
	Pool            *pgxpool.Pool
	Nudger          rail.Nudger
	OutboxRetention time.Duration
	InboxRetention  time.Duration
	FrameRetention  postgres.FrameRetention // zero fields: rail's defaults
	Limit           int                     // matters re-nudged per run; zero: 500
	// Backfill admits outdated matters at its rate onto the backfill
	// queue; nil: no backfill (RAIL_BACKFILL_QUEUE_URL unset).
	Backfill *rail.Backfill
	// Deployed is the deployed builder's identity (for MattersOutdated).
	Deployed rail.BuilderIdentity
	Metrics  *emf.Logger
	Log      *slog.Logger
}

// NewSweeper wires the sweeper from cfg and d.
func NewSweeper(cfg Config, d Deps) *SweeperHandler {
	l := postgres.NewLedger(d.Pool, cfg.RailConfig())
	h := &SweeperHandler{
		Ledger: l, Pool: d.Pool, Nudger: d.nudger(cfg),
		OutboxRetention: cfg.OutboxRetention, InboxRetention: cfg.InboxRetention,
		FrameRetention: cfg.FramePolicy(),
		Metrics:        d.metrics(), Log: d.log(),
	}
	h.Deployed, _ = cfg.DeployedIdentity() // LoadConfig checked it for the sweeper
	if bn := d.backfillNudger(cfg); bn != nil && h.Deployed.Name != "" {
		h.Backfill = &rail.Backfill{Ledger: l, Deployed: h.Deployed, Rate: cfg.BackfillRate, Nudger: bn, Log: d.log()}
	}
	return h
}

// SweepResult is what an invocation returns.
type SweepResult struct {
	Renudged        int                   `json:"renudged"`
	Quarantined     int                   `json:"quarantined"`
	LeaseExpiries   int                   `json:"lease_expiries"`
	OutboxPruned    int64                 `json:"outbox_pruned"`
	OutboxPruneLeft int64                 `json:"outbox_prune_left"` // prunable rows left for the next run
	InboxPruned     int64                 `json:"inbox_pruned"`
	FramesPruned    postgres.FramesPruned `json:"frames_pruned"`
	MattersBehind   int                   `json:"matters_behind"`
	OutboxBacklog   int64                 `json:"outbox_backlog"`
	QuarantinedNow  int                   `json:"matters_quarantined"`
	// The gauges' other values, as written (OldestUnservedDemandSeconds,
	// MattersClosedWithDemand, OutboxOldestAgeSeconds, OutboxParked).
	OldestUnservedDemandSeconds float64 `json:"oldest_unserved_demand_seconds"`
	MattersClosedWithDemand     int     `json:"matters_closed_with_demand"`
	OutboxOldestAgeSeconds      float64 `json:"outbox_oldest_age_seconds"`
	OutboxParked                int64   `json:"outbox_parked"`
	RecordsPruned               int64   `json:"records_pruned"` // demand and nudge records past RAIL_INBOX_RETENTION
	Outdated                    int     `json:"matters_outdated"`
	Backfilled                  int     `json:"backfill_admitted"`
	BackfillPaused              bool    `json:"backfill_paused"`
}

// Handle runs one sweep. Every step runs even if an earlier one failed; the
// errors are returned together (the invocation fails and alarms).
func (h *SweeperHandler) Handle(ctx context.Context, ev ScheduleEvent) (SweepResult, error) {
	if err := ev.check(Sweeper); err != nil {
		return SweepResult{}, err
	}
	ctx, end := tracing.StartSegment(ctx, "sweeper")
	defer flush(ctx, h.Metrics, h.Log)
	var res SweepResult
	var errs []error

	rep, err := h.Ledger.Sweep(ctx, h.Limit)
	if err != nil {
		errs = append(errs, err)
	} else {
		res.Quarantined, res.LeaseExpiries, res.MattersBehind, res.QuarantinedNow =
			len(rep.Quarantined), rep.LeaseExpiries, rep.MattersBehind, rep.MattersQuarantined
		res.OldestUnservedDemandSeconds, res.MattersClosedWithDemand = rep.OldestUnservedDemandSeconds, rep.MattersClosedWithDemand
		for _, q := range rep.Quarantined {
			h.Log.ErrorContext(ctx, "matter quarantined: its lease expired on the last allowed attempt",
				"firm_id", q.FirmID, "matter_id", q.MatterID)
		}
		h.Metrics.Gauge(MetricMattersBehind, float64(rep.MattersBehind), emf.Count)
		h.Metrics.Gauge(MetricMattersQuarantined, float64(rep.MattersQuarantined), emf.Count)
		h.Metrics.Gauge(MetricOldestUnservedDemandSeconds, rep.OldestUnservedDemandSeconds, emf.Seconds)
		h.Metrics.Gauge(MetricMattersClosedWithDemand, float64(rep.MattersClosedWithDemand), emf.Count)
		h.Metrics.Count(MetricLeaseExpiries, float64(rep.LeaseExpiries))
		if len(rep.Renudge) > 0 {
			th := tracing.TraceHeader(ctx)
			nudges := make([]rail.Nudge, len(rep.Renudge))
			for i, ref := range rep.Renudge {
				nudges[i] = rail.Nudge{V: 1, FirmID: ref.FirmID, MatterID: ref.MatterID, Reason: rail.ReasonSweep, TraceHeader: th}
				h.Log.InfoContext(ctx, "re-nudging unserved demand", "firm_id", ref.FirmID, "matter_id", ref.MatterID)
			}
			if err := h.Nudger.Nudge(ctx, nudges, 0); err != nil {
				errs = append(errs, fmt.Errorf("re-nudge: %w", err))
			} else {
				res.Renudged = len(nudges)
			}
		}
	}
	if pr, err := postgres.PruneOutbox(ctx, h.Pool, h.OutboxRetention, postgres.PruneLimits{}); err != nil {
		errs = append(errs, err)
	} else {
		res.OutboxPruned, res.OutboxPruneLeft = pr.Deleted, pr.Left
	}
	if res.InboxPruned, err = postgres.PruneInbox(ctx, h.Pool, h.InboxRetention, 0); err != nil {
		errs = append(errs, err)
	}
	if res.RecordsPruned, err = postgres.PruneOnCallRecord(ctx, h.Pool, h.InboxRetention, 0); err != nil {
		errs = append(errs, err)
	}
	// The backfill, after the re-nudges: admitted within its rate, onto its
	// own queue; live demand never waits behind it.
	if err := h.backfill(ctx, &res); err != nil {
		errs = append(errs, err)
	}
	// Frame history: one bounded pass (newest RAIL_FRAME_KEEP per matter and
	// everything younger than RAIL_FRAME_RETENTION stay; the current frame
	// always does).
	if res.FramesPruned, err = postgres.PruneFrames(ctx, h.Pool, h.FrameRetention); err != nil {
		errs = append(errs, err)
	}
	// The relay reports the outbox too; the sweeper reporting it as well
	// keeps the OutboxOldestAge alarm alive when the relay is not running.
	if g, err := postgres.ReadOutboxGauges(ctx, h.Pool); err != nil {
		errs = append(errs, err)
	} else {
		res.OutboxBacklog, res.OutboxOldestAgeSeconds, res.OutboxParked = g.Backlog, g.OldestAgeSeconds, g.Parked
		h.Metrics.Gauge(MetricOutboxBacklog, float64(g.Backlog), emf.Count)
		h.Metrics.Gauge(MetricOutboxOldestAgeSeconds, g.OldestAgeSeconds, emf.Seconds)
		h.Metrics.Gauge(MetricOutboxParked, float64(g.Parked), emf.Count)
	}
	err = errors.Join(errs...)
	h.Log.InfoContext(ctx, "sweep done", "renudged", res.Renudged, "quarantined", res.Quarantined,
		"lease_expiries", res.LeaseExpiries, "matters_behind", res.MattersBehind, "outbox_pruned", res.OutboxPruned,
		"outbox_prune_left", res.OutboxPruneLeft,
		"inbox_pruned", res.InboxPruned, "frames_pruned", res.FramesPruned.Frames, "err", errString(err))
	end(err)
	return res, err
}

// backfill runs one admission pass and reports MattersOutdated (every
// pass, zero included).
func (h *SweeperHandler) backfill(ctx context.Context, res *SweepResult) error {
	if h.Backfill == nil {
		if h.Deployed.Name == "" {
			return nil
		}
		n, _, err := (&rail.Backfill{Ledger: h.Ledger, Deployed: h.Deployed}).Count(ctx)
		if err != nil {
			return err
		}
		res.Outdated = n
		h.Metrics.Gauge(MetricMattersOutdated, float64(n), emf.Count)
		return nil
	}
	pass, err := h.Backfill.Admit(ctx)
	if err != nil {
		return err
	}
	res.Outdated, res.Backfilled, res.BackfillPaused = pass.Outdated, len(pass.Admitted), pass.Paused
	h.Metrics.Gauge(MetricMattersOutdated, float64(pass.Outdated), emf.Count)
	h.Metrics.Count(MetricBackfillAdmitted, float64(len(pass.Admitted)))
	paused := 0.0
	if pass.Paused {
		paused = 1
	}
	h.Metrics.Gauge(MetricBackfillPaused, paused, emf.Count)
	if len(pass.Admitted) > 0 || pass.Outdated > 0 {
		h.Log.InfoContext(ctx, "backfill pass", "admitted", len(pass.Admitted), "outdated", pass.Outdated,
			"paused", pass.Paused, "rate_per_minute", h.Backfill.Rate, "deployed", h.Deployed.String())
	}
	return nil
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
