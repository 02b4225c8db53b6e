package promise

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pramaan/brief-rail/pkg/aws/eventbridge"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// The fault points at each hop: the bus (a rail.Publisher in front of the
// local bus), the nudgers (in front of the local queues' nudgers) and the
// Brief builder (the one the builder function is assembled with).

// faultBus is the bus as the relay sees it: the local bus behind a slow
// network, throttling, refusals and failed calls. A refused entry gets the
// EventBridge adapter's own error type (eventbridge.EntryError), so the
// relay classifies it as it would in AWS.
type faultBus struct {
	r    *run
	next rail.Publisher
}

// Retryable and permanent PutEvents entry error codes.
var (
	retryableCodes = []string{"ThrottlingException", "InternalFailure"}
	permanentCodes = []string{"MalformedDetail", "InvalidArgument"}
)

func (b *faultBus) Publish(ctx context.Context, entries []rail.BusEntry) ([]rail.PublishResult, error) {
	r := b.r
	r.inv.calls++
	if lat := r.inv.busLatency; lat > 0 {
		t := time.NewTimer(lat)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("eventbridge: PutEvents: %w", ctx.Err())
		}
	}
	if r.faulty() && r.chance(FBusCallFailed, 0.03) {
		return nil, errors.New("eventbridge: PutEvents: operation error EventBridge: PutEvents, https response error StatusCode: 500, InternalFailure")
	}
	if r.faulty() && !r.inv.killed && r.chance(FKillDuringPublish, 0.03) {
		r.inv.killed = true
		r.killRole(RoleRelay)
	}
	out := make([]rail.PublishResult, len(entries))
	var fwd []rail.BusEntry
	var at []int
	storm := r.clock.Now().Before(r.stormUntil)
	for i, e := range entries {
		out[i].EventID = e.EventID
		switch {
		case r.poisonEntry(e):
			code := permanentCodes[r.rng.IntN(len(permanentCodes))]
			out[i].Err = &eventbridge.EntryError{Code: code, Message: "the simulated bus refuses this entry for good"}
			r.refusals[e.EventID] = append(r.refusals[e.EventID], true)
		case storm || (r.faulty() && r.chance(FBusRetryable, 0.08)):
			if storm {
				r.note(FBusThrottleStorm)
			}
			code := retryableCodes[r.rng.IntN(len(retryableCodes))]
			out[i].Err = &eventbridge.EntryError{Code: code, Message: "retry later"}
			r.refusals[e.EventID] = append(r.refusals[e.EventID], false)
		default:
			fwd = append(fwd, e)
			at = append(at, i)
		}
	}
	if len(fwd) > 0 {
		res, err := b.next.Publish(ctx, fwd)
		if err != nil {
			return nil, err
		}
		for j, pr := range res {
			out[at[j]].Err = pr.Err
			if pr.Err == nil {
				r.inv.accepted++
				r.published[fwd[j].EventID]++
			}
		}
	}
	return out, nil
}

// poisonEntry: the entry is the document.uploaded of a document the run
// marked as one the bus refuses for good.
func (r *run) poisonEntry(e rail.BusEntry) bool {
	if len(r.poison) == 0 {
		return false
	}
	d, err := rail.DecodeFactDetail(e.Detail)
	if err != nil {
		return false
	}
	var p struct {
		DocumentID string `json:"document_id"`
	}
	if json.Unmarshal(d.Payload, &p) != nil {
		return false
	}
	id, err := uuid.Parse(p.DocumentID)
	return err == nil && r.poison[id]
}

// faultNudger fails a nudge's send now and then (the handlers log it and
// rely on the sweeper).
type faultNudger struct {
	r    *run
	next rail.Nudger
}

func (n *faultNudger) Nudge(ctx context.Context, nudges []rail.Nudge, delay time.Duration) error {
	if ref, ok := n.r.turns.nudgeAct(nudges); ok { // a build's retry or follow-up: its turn's last act
		n.r.turns.wait(ref, "nudge")
		defer n.r.turns.done(ref)
	}
	if n.r.faulty() && n.r.chance(FNudgeSendFailed, 0.03) {
		for _, nd := range nudges {
			n.r.excuse(nd.Ref())
			n.r.inv.unsent = append(n.r.inv.unsent, nd.Ref())
		}
		return errors.New("sqs: SendMessageBatch: simulated failure")
	}
	return n.next.Nudge(ctx, nudges, delay)
}

// simBuilder is the Brief builder: it lists the documents it read (the
// oracle compares that list with the record) under the deployed identity,
// and fails, times out, is throttled, returns a body the database refuses,
// or lets demand arrive while it builds, as the run decides.
type simBuilder struct{ r *run }

func (b *simBuilder) Name() string                   { return b.r.identity.Name }
func (b *simBuilder) Identity() rail.BuilderIdentity { return b.r.identity }

// Body is the frame body the simulation's builder writes.
type Body struct {
	Schema    string   `json:"schema"`
	MatterID  string   `json:"matter_id"`
	Identity  string   `json:"identity"`
	Documents []string `json:"documents"`
	Note      string   `json:"note,omitempty"`
}

// BodySchema is Body's schema name.
const BodySchema = "promise-sim/v1"

func (b *simBuilder) Build(ctx context.Context, in rail.Inputs) (json.RawMessage, error) {
	r := b.r
	r.turns.wait(in.Ref, "Build")
	r.turns.inBuild(true)
	defer r.turns.inBuild(false)
	body := Body{Schema: BodySchema, MatterID: in.Ref.MatterID.String(), Identity: r.identity.String(), Documents: []string{}}
	for d, err := range in.Documents(ctx) {
		if err != nil {
			return nil, err
		}
		body.Documents = append(body.Documents, d.ID.String())
	}
	r.inv.built = append(r.inv.built, in.Ref)
	last := r.lastAttempt(in.Ref)
	fault := Kind("")
	if r.faulty() {
		switch {
		case r.w6 != nil && *r.w6 == in.Ref:
			fault = FBuildFailed
		case r.failNext == in.Ref:
			fault, r.failNext = FBuildFailed, rail.MatterRef{}
			r.note(FBuildFailed)
		case r.refuseNext == in.Ref:
			fault, r.refuseNext = FBuildRefusedBody, rail.MatterRef{}
			r.note(FBuildRefusedBody)
		case r.chance(FBuildFailed, 0.07):
			fault = FBuildFailed
		case r.chance(FBuildTimeout, 0.03):
			fault = FBuildTimeout
		case r.chance(FBuildThrottled, 0.03):
			fault = FBuildThrottled
		case r.chance(FBuildRefusedBody, 0.04):
			fault = FBuildRefusedBody
		}
		if r.chance(FKillDuringBuild, 0.03) {
			r.inv.killed = true
			r.excuse(in.Ref)
			r.killRole(RoleBuilder)
		}
		// Demand while this build runs: a document is uploaded and its
		// fact travels the whole way to the ledger before the build returns.
		failing := fault != "" && fault != FBuildRefusedBody
		w6 := r.w6 != nil && *r.w6 == in.Ref && last
		hit := r.rng.Float64() < 0.06 && r.cfg.on(FDemandDuringBuild) // drawn either way
		if w6 || hit && (!(failing && last) || r.cfg.on(WDemandDuringLastAttempt)) {
			if !w6 {
				r.note(FDemandDuringBuild)
			}
			if w6 || failing && last {
				r.note(WDemandDuringLastAttempt)
				r.w6Done = true
			}
			if w6 {
				defer func() { r.w6 = nil }()
			}
			r.tracef("demand during the build of %s (last attempt %v, failing %v)", short(in.Ref), last, failing)
			r.upload(in.Ref, 1)
			r.invokeRelay()
			r.drainTrigger()
		}
	}
	switch fault {
	case FBuildFailed:
		return nil, errors.New("model: invalid response (simulated)")
	case FBuildTimeout:
		return nil, fmt.Errorf("model call: %w", context.DeadlineExceeded)
	case FBuildThrottled:
		return nil, errors.New("bedrock: ThrottlingException: too many requests (simulated)")
	case FBuildRefusedBody:
		body.Note = "page 3 \x00 text" // valid JSON ("\u0000"); jsonb refuses it (SQLSTATE 22P05)
	}
	return json.Marshal(body)
}

// lastAttempt: the matter's running claim is its last allowed attempt.
func (r *run) lastAttempt(ref rail.MatterRef) bool {
	var last bool
	err := r.env.Admin.QueryRow(r.ctx, `SELECT attempts >= coalesce(max_attempts, $3) FROM ops.matter_frame_jobs
        WHERE firm_id = $1 AND matter_id = $2`, ref.FirmID, ref.MatterID, r.maxAttempts).Scan(&last)
	if err != nil {
		r.violate(VHarness, "last attempt: %v", err)
	}
	return last
}

// heldOutbox is defect 2's revert (Config.Revert[2]): the relay's outbox
// port with a transaction held open on the relay's own role from the claim
// that read rows, across the PutEvents calls, to the statement carrying
// that pass's marks (the next claim, or the settlement), and the marks
// made only if that transaction is still alive — the shape of the relay
// before issue 18, where the claim's transaction carried the marks. When
// the bus is slow past the relay role's idle_in_transaction_session_timeout
// the database ends the session and the pass's marks are lost, as they
// were then. The fix (no transaction across the bus call) is the
// production code's structure, not a switch, so the revert is this wrapper
// in the oracle and no production code changes.
type heldOutbox struct {
	rail.Outbox
	pool *pgxpool.Pool
	tx   pgx.Tx
	read []uuid.UUID        // the rows the held transaction's claim read
	lost map[uuid.UUID]bool // rows whose marks died with their pass's transaction
}

// alive ends the held transaction, saying whether it was still alive; when
// it was not, the marks of the rows its claim read are lost, whichever
// later statement the relay would carry them on.
func (h *heldOutbox) alive(ctx context.Context) error {
	tx := h.tx
	if tx == nil {
		return nil
	}
	h.tx = nil
	_, err := tx.Exec(ctx, `SELECT 1`)
	_ = tx.Rollback(context.WithoutCancel(ctx))
	if err != nil {
		if h.lost == nil {
			h.lost = map[uuid.UUID]bool{}
		}
		for _, id := range h.read {
			h.lost[id] = true
		}
		return fmt.Errorf("the pass's transaction, open across PutEvents, ended: %w", err)
	}
	return nil
}

// keep drops the ids whose marks were lost.
func (h *heldOutbox) keep(ids []uuid.UUID) []uuid.UUID {
	var out []uuid.UUID
	for _, id := range ids {
		if !h.lost[id] {
			out = append(out, id)
		}
	}
	return out
}

func (h *heldOutbox) Claim(ctx context.Context, q rail.OutboxClaimRequest) (rail.OutboxClaim, error) {
	_ = h.alive(ctx)
	q.Published = h.keep(q.Published)
	c, err := h.Outbox.Claim(ctx, q)
	if err != nil || len(c.Rows) == 0 {
		return c, err
	}
	h.read = h.read[:0]
	for _, o := range c.Rows {
		delete(h.lost, o.EventID) // read again: a new pass's to mark
		h.read = append(h.read, o.EventID)
	}
	tx, err := h.pool.Begin(ctx)
	if err == nil {
		if _, err = tx.Exec(ctx, `SELECT 1`); err != nil {
			_ = tx.Rollback(context.WithoutCancel(ctx))
		}
	}
	if err != nil {
		return c, fmt.Errorf("the pass's transaction (defect 2's revert): %w", err)
	}
	h.tx = tx
	return c, nil
}

func (h *heldOutbox) Settle(ctx context.Context, s rail.OutboxSettlement) (rail.Settled, error) {
	if err := h.alive(ctx); err != nil {
		return rail.Settled{}, err
	}
	s.Published = h.keep(s.Published)
	return h.Outbox.Settle(ctx, s)
}
