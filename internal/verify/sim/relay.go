package sim

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// pubPlan is how the bus answers one relay pass, drawn by the scheduler
// before the pass so the answer does not depend on timing.
type pubPlan struct {
	failCall bool   // the whole PutEvents call fails
	reject   uint64 // bit i set: entry i of a call is rejected
}

// bus is an in-memory recording rail.Publisher (a test double of the port):
// it applies the current plan, gives every accepted entry a fresh envelope
// id (as EventBridge does, so a re-publish looks new), and a consumer that
// dedupes on the application event_id.
type bus struct {
	mu        sync.Mutex
	plan      pubPlan
	accepted  map[uuid.UUID]int // event_id -> times accepted
	details   map[uuid.UUID]rail.FactDetail
	envelopes int
	calls     int
	badDetail []string

	// gate, when set, holds the next Publish call until closed, after
	// signalling entered (two relays at once).
	gate    chan struct{}
	entered chan struct{}
}

type relayPublisher struct{ b *bus }

func (p relayPublisher) Publish(ctx context.Context, entries []rail.BusEntry) ([]rail.PublishResult, error) {
	b := p.b
	b.mu.Lock()
	gate, entered := b.gate, b.entered
	b.gate, b.entered = nil, nil
	b.mu.Unlock()
	if gate != nil {
		close(entered)
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	if b.plan.failCall {
		return nil, errors.New("simulated PutEvents failure")
	}
	size := 0
	for _, e := range entries {
		size += rail.EntrySize(e.Name, e.Detail)
	}
	if size > SimMaxEntryBytes { // as EventBridge answers an over-large request
		return nil, fmt.Errorf("ValidationException: the request's entries total %d bytes, over %d", size, SimMaxEntryBytes)
	}
	out := make([]rail.PublishResult, len(entries))
	for i, e := range entries {
		out[i].EventID = e.EventID
		if i < 64 && b.plan.reject&(1<<i) != 0 {
			out[i].Err = errors.New("simulated entry rejection")
			continue
		}
		b.envelopes++
		b.accepted[e.EventID]++
		d, err := rail.DecodeFactDetail(e.Detail)
		if err != nil || d.EventID != e.EventID || d.EventName != e.Name {
			b.badDetail = append(b.badDetail, fmt.Sprintf("%s: %v", e.EventID, err))
			continue
		}
		b.details[e.EventID] = d
	}
	return out, nil
}

type relayCrash struct{}

func (r *run) newRelay(i int, afterPublish func()) Drainer {
	return r.cfg.Relay(i, r.env.Relays[i], relayPublisher{r.bus}, RelayOpts{AfterPublish: afterPublish})
}

// relayFailed records a relay pass that failed when the bus did not: the
// rows it took were held back.
func (r *run) relayFailed(err error, what string) {
	if err != nil {
		r.res.violate(VRelayHeldBack, "%s: %v", what, err)
		r.tracef("%s failed: %v", what, err)
	}
}

// drainOnce runs one relay pass; a relayCrash panic from AfterPublish is
// the relay dying between PutEvents and marking (its transaction rolls
// back). It reports whether the pass crashed.
func (r *run) drainOnce(rl Drainer) (st rail.RelayStats, crashed bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			if _, ok := p.(relayCrash); !ok {
				panic(p)
			}
			crashed = true
		}
	}()
	st, err = rl.DrainOnce(r.ctx)
	return st, false, err
}

func (r *run) setPlan(p pubPlan) {
	r.bus.mu.Lock()
	r.bus.plan = p
	r.bus.mu.Unlock()
}

// doRelay is one relay pass with a bus answer drawn from the seed.
func (r *run) doRelay() {
	i := r.rng.IntN(len(r.env.Relays))
	var plan pubPlan
	var after func()
	what := "ok"
	switch x := r.rng.Float64(); {
	case x < 0.12:
		plan.reject = r.rng.Uint64() & r.rng.Uint64() // about a quarter of the entries
		r.fault(FaultPutEventsPartial)
		what = "partial failure"
	case x < 0.20:
		plan.failCall = true
		r.fault(FaultPutEventsFailed)
		what = "call failed"
	case x < 0.32:
		after = func() { panic(relayCrash{}) }
		r.fault(FaultRelayCrash)
		what = "crash between PutEvents and marking"
	}
	r.setPlan(plan)
	st, crashed, err := r.drainOnce(r.newRelay(i, after))
	r.setPlan(pubPlan{})
	if err != nil && !plan.failCall && !crashed {
		r.relayFailed(err, fmt.Sprintf("relay%d pass (%s)", i, what))
	}
	r.tracef("relay%d pass (%s): published %d failed %d crashed %v backlog %d", i, what, st.Published, st.Failed, crashed, st.Backlog)
}

// doTwoRelays runs relay 0's pass up to PutEvents and holds it there (the
// relay lease held, no transaction open), runs relay 1's whole pass
// meanwhile, which must find the lease held and publish nothing, then lets
// relay 0 finish.
func (r *run) doTwoRelays() {
	r.fault(FaultTwoRelays)
	r.setPlan(pubPlan{})
	gate, entered := make(chan struct{}), make(chan struct{})
	r.bus.mu.Lock()
	r.bus.gate, r.bus.entered = gate, entered
	r.bus.mu.Unlock()
	var (
		st0  rail.RelayStats
		err0 error
	)
	done := make(chan struct{})
	go func() { defer close(done); st0, err0 = r.newRelay(0, nil).DrainOnce(r.ctx) }()
	select {
	case <-entered:
	case <-done: // nothing to publish: relay 0 never called PutEvents
		r.bus.mu.Lock()
		r.bus.gate, r.bus.entered = nil, nil
		r.bus.mu.Unlock()
		r.relayFailed(err0, "relay0")
		r.tracef("two relays: relay0 had nothing to publish")
		return
	case <-time.After(15 * time.Second):
		r.fail("relay0 never reached PutEvents")
	}
	before := r.acceptedCopy()
	st1, err1 := r.newRelay(1, nil).DrainOnce(r.ctx)
	r.relayFailed(err1, "relay1 while relay0 holds its rows")
	mid := r.acceptedCopy()
	close(gate)
	<-done
	r.relayFailed(err0, "relay0")
	after := r.acceptedCopy()
	for id, n := range after {
		if n > mid[id] && mid[id] > before[id] {
			r.res.violate(VFactTwice, "event %s published by both relays while relay0 held it", id)
		}
	}
	if st1.Published > 0 || st1.Failed > 0 {
		r.res.violate(VFactTwice, "relay1 published %d and failed %d while relay0 held the relay lease", st1.Published, st1.Failed)
	}
	if st1.LeaseBusy > 0 {
		r.fault(FaultTwoRelaysLeaseBusy)
	}
	r.tracef("two relays: relay0 published %d, relay1 (meanwhile) published %d", st0.Published, st1.Published)
}

func (r *run) acceptedCopy() map[uuid.UUID]int {
	r.bus.mu.Lock()
	defer r.bus.mu.Unlock()
	out := make(map[uuid.UUID]int, len(r.bus.accepted))
	for k, v := range r.bus.accepted {
		out[k] = v
	}
	return out
}

// doOutOfOrderFacts: a demand transaction records its fact and stays open
// while a later one commits and a relay pass runs; then it commits. Its
// fact is older (occurred_at) than one already published.
func (r *run) doOutOfOrderFacts() {
	open := r.openMatters()
	i1 := r.rng.IntN(len(open))
	m1, m2 := open[i1], open[(i1+1+r.rng.IntN(len(open)-1))%len(open)]
	d1, d2 := r.newUUID(), r.newUUID()
	e1, e2 := r.newUUID(), r.newUUID()
	r.fault(FaultOutOfOrderFacts)
	tx1, err := r.env.Demander.Begin(r.ctx)
	r.must(err, "begin")
	defer func() { _ = tx1.Rollback(context.WithoutCancel(r.ctx)) }()
	res1, err := r.recordDemand(tx1, m1, d1, e1)
	r.must(err, "demand tx1")
	var res2 rail.DemandResult
	err = pgxBegin(r, func(q postgres.Querier) error {
		var e error
		res2, e = r.recordDemand(q, m2, d2, e2)
		return e
	})
	r.must(err, "demand tx2")
	r.applyDemand(m2, d2, res2, "tx2, commits first")
	st, _, err := r.drainOnce(r.newRelay(r.rng.IntN(len(r.env.Relays)), nil))
	r.relayFailed(err, "relay between the commits")
	r.must(tx1.Commit(r.ctx), "commit tx1")
	r.applyDemand(m1, d1, res1, "tx1, older, commits second")
	r.tracef("out-of-order facts: relay published %d between the commits", st.Published)
}

// relayDrain publishes everything left, with the bus healthy.
func (r *run) relayDrain() {
	r.setPlan(pubPlan{})
	for pass := 0; pass < 200; pass++ {
		st, err := r.newRelay(pass%len(r.env.Relays), nil).DrainOnce(r.ctx)
		if err != nil {
			r.relayFailed(err, "relay drain")
			return // the checks then count what was held back
		}
		if st.Backlog == 0 && st.Published == 0 {
			return
		}
		if st.Published == 0 {
			r.timeTravel(6 * time.Minute) // rows backing off (cap 5m)
		}
	}
}

// checkOutbox: every committed fact published at least once (or parked),
// marked only when the bus accepted it, nothing published that never
// committed, exactly one frame.built per landed frame and none for a
// fenced one, and a document.uploaded for every document demand.
func (r *run) checkOutbox() {
	rows, err := r.env.Admin.Query(r.ctx, `SELECT event_id, event_name, matter_id, coalesce(payload->>'token', ''),
        coalesce(payload->>'document_id', ''), published_at IS NOT NULL, parked_at IS NOT NULL, parked_reason
        FROM ops.outbox_facts`)
	r.must(err, "outbox")
	type fact struct {
		name, token, doc  string
		m                 int
		published, parked bool
		reason            string
	}
	facts := map[uuid.UUID]fact{}
	for rows.Next() {
		var (
			id     uuid.UUID
			matter uuid.NullUUID
			f      fact
		)
		r.must(rows.Scan(&id, &f.name, &matter, &f.token, &f.doc, &f.published, &f.parked, &f.reason), "scan outbox")
		f.m = r.byID[matter.UUID]
		facts[id] = f
	}
	r.must(rows.Err(), "outbox")
	// Odd rows: a legal payload reaches the bus as stored (jsonb equality:
	// same values, numbers exact) and is never parked; an undeliverable row
	// is parked with its reason and never published. Nothing else is
	// parked (the simulation's relay never parks for bus refusals).
	for id, o := range r.odd {
		f := facts[id]
		r.bus.mu.Lock()
		d, onBus := r.bus.details[id]
		r.bus.mu.Unlock()
		switch {
		case o.legal && f.parked:
			r.res.violate(VWrongPark, "legal payload %.60s parked: %s", o.payload, f.reason)
		case o.legal && onBus:
			var same bool
			r.must(r.env.Admin.QueryRow(r.ctx, `SELECT $1::jsonb = $2::jsonb`, o.payload, string(d.Payload)).Scan(&same), "compare payload")
			if !same {
				r.res.violate(VPayloadAltered, "row %.60s, bus %.60s", o.payload, d.Payload)
			}
		case !o.legal && (!f.parked || f.reason == "" || r.bus.accepted[id] > 0):
			r.res.violate(VWrongPark, "undeliverable row (%s) parked %v reason %q published %d times", o.why, f.parked, f.reason, r.bus.accepted[id])
		}
	}
	for id, f := range facts {
		if _, ok := r.odd[id]; f.parked && !ok {
			r.res.violate(VWrongPark, "%s %s parked: %s", f.name, id, f.reason)
		}
	}
	b := r.bus
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, s := range b.badDetail {
		r.res.violate(VFactLost, "bus detail did not decode: %s", s)
	}
	frameFacts := map[[2]int64]int{}
	docFacts := map[string]bool{}
	for id, f := range facts {
		r.res.Facts++
		switch {
		case f.parked:
			r.res.FactsParked++
		case !f.published:
			r.res.violate(VFactLost, "%s %s committed, never published", f.name, id)
		case b.accepted[id] == 0:
			r.res.violate(VFactMarked, "%s %s marked published, never accepted by the bus", f.name, id)
		}
		if n := b.accepted[id]; n > 1 {
			r.res.FactsRepublished += n - 1
		}
		switch f.name {
		case rail.FactFrameBuilt:
			var tok int64
			if _, err := fmt.Sscan(f.token, &tok); err != nil {
				r.res.violate(VFrameFact, "frame.built %s without a token", id)
			}
			frameFacts[[2]int64{int64(f.m), tok}]++
		case rail.FactDocumentUploaded:
			docFacts[f.doc] = true
		}
	}
	for id := range b.accepted {
		if _, ok := facts[id]; !ok {
			r.res.violate(VFactPhantom, "event %s published but no committed outbox row", id)
		}
	}
	for m, h := range r.hist {
		tokens := slices.Collect(func(yield func(int64) bool) {
			for t := range h.frames {
				if !yield(t) {
					return
				}
			}
		})
		for _, t := range tokens {
			if n := frameFacts[[2]int64{int64(m), t}]; n != 1 {
				r.res.violate(VFrameFact, "m%d: landed frame token %d has %d frame.built facts", m, t, n)
			}
		}
		for _, d := range h.demands {
			if !docFacts[d.doc.String()] {
				r.res.violate(VFactLost, "m%d: document of demand %d has no document.uploaded fact", m, d.gen)
			}
		}
	}
	for k, n := range frameFacts {
		if !r.hist[k[0]].frames[k[1]] {
			r.res.violate(VFrameFact, "m%d: %d frame.built facts for token %d, which never landed", k[0], n, k[1])
		}
	}
}

// oddRow is a row written by hand, as the host application may: what the
// relay must do with it.
type oddRow struct {
	legal   bool   // the bus can carry it: published, payload as stored
	payload string // the payload as inserted
	why     string // undeliverable: why
}

// doOddRow inserts one outbox row the CHECKs accept, by raw SQL: a payload
// with numbers, nesting, HTML characters or 2 KB of text (legal: it must
// reach the bus as stored), or a row no bus can carry (an infinite or
// five-digit-year occurred_at, a nil firm or matter id, an entry over the
// bus's size limit), which must be parked alone.
func (r *run) doOddRow() {
	id := r.newUUID()
	firm, matter := "'"+r.firm.String()+"'", "'"+r.matters[r.rng.IntN(len(r.matters))].MatterID.String()+"'"
	occurred := "clock_timestamp()"
	o := oddRow{legal: true}
	switch k := r.rng.IntN(10); k {
	case 0:
		o.payload = fmt.Sprintf(`{"n": %d}`, r.rng.IntN(1000))
	case 1:
		o.payload = `{"o": {"a": [1, 2.50, true, null, {"deep": "<&>"}]}, "s": "é \u2028"}`
	case 2:
		o.payload = `{"big": 12345678901234567890.000000000000000001, "neg": -1e-300}`
	case 3:
		o.payload = `{"text": "` + strings.Repeat("x", 2000) + `"}`
	case 4:
		o.payload, o.legal, o.why = `{"text": "`+strings.Repeat("y", 3900)+`"}`, false, "entry over the bus's size limit"
	case 5:
		o.payload, o.legal, o.why, occurred = `{}`, false, "occurred_at infinity", "'infinity'"
	case 6:
		o.payload, o.legal, o.why, occurred = `{}`, false, "occurred_at in year 12026", "'12026-01-01T00:00:00Z'"
	case 7: // no matter: the outbox's key to app.matters admits a firm-level fact under any firm id
		o.payload, o.legal, o.why, firm, matter = `{}`, false, "nil firm id", "'00000000-0000-0000-0000-000000000000'", "NULL"
	case 8: // the key admits it only for a matter that exists: the firm's nil-id matter
		o.payload, o.legal, o.why, matter = `{}`, false, "nil matter id", "'00000000-0000-0000-0000-000000000000'"
		_, err := r.env.Admin.Exec(r.ctx, `INSERT INTO app.matters (firm_id, matter_id) VALUES (`+firm+`, `+matter+`) ON CONFLICT DO NOTHING`)
		r.must(err, "insert the nil-id matter")
	default:
		o.payload = `{"ok": true, "none": null, "list": []}`
	}
	if o.legal {
		r.fault(FaultOddRowLegal)
	} else {
		r.fault(FaultOddRowUndeliverable)
	}
	_, err := r.env.Admin.Exec(r.ctx, `INSERT INTO ops.domain_event_outbox (event_id, firm_id, matter_id, event_name, payload, occurred_at)
        VALUES ($1, `+firm+`, `+matter+`, 'document.annotated', $2::jsonb, `+occurred+`)`, id, o.payload)
	r.must(err, "insert odd outbox row")
	r.odd[id] = o
	what := "legal"
	if !o.legal {
		what = "undeliverable: " + o.why
	}
	r.tracef("odd outbox row %s (%s, %d-byte payload)", id, what, len(o.payload))
}

// doRelayKilled: relay 0 takes the relay lease and freezes inside
// PutEvents (a Lambda sandbox frozen mid-pass) past its lease; relay 1 must
// then take the lease over and publish the rows. Relay 0 wakes, publishes again (consumers dedupe
// on event_id) and settles: its marks change nothing relay 1 did, and
// nothing is lost or held back. No transaction is open while relay 0 is
// frozen.
func (r *run) doRelayKilled() {
	r.setPlan(pubPlan{})
	gate, entered := make(chan struct{}), make(chan struct{})
	r.bus.mu.Lock()
	r.bus.gate, r.bus.entered = gate, entered
	r.bus.mu.Unlock()
	var err0 error
	done := make(chan struct{})
	relay0 := r.cfg.Relay(0, r.env.Relays[0], relayPublisher{r.bus}, RelayOpts{})
	go func() { defer close(done); _, err0 = relay0.DrainOnce(r.ctx) }()
	select {
	case <-entered:
	case <-done:
		r.bus.mu.Lock()
		r.bus.gate, r.bus.entered = nil, nil
		r.bus.mu.Unlock()
		r.relayFailed(err0, "relay0")
		r.tracef("relay froze: relay0 had nothing to publish")
		return
	case <-time.After(15 * time.Second):
		r.fail("relay0 never reached PutEvents")
	}
	r.fault(FaultRelayTxKilled)
	var inTx int
	var lastQuery string
	r.must(r.env.Admin.QueryRow(r.ctx, `SELECT count(*), coalesce(max(query), '') FROM pg_stat_activity WHERE application_name = $1
        AND datname = current_database() AND state LIKE 'idle in transaction%'`, AppName("relay0")).Scan(&inTx, &lastQuery), "poll relay0")
	if inTx > 0 {
		r.res.violate(VRelayHeldBack, "relay0 holds a transaction open across PutEvents (last statement: %.200s)", lastQuery)
	}
	// The rows relay 0 may hold (every due row: its claim wrote none), and
	// time passing beyond its lease.
	rows, err := r.env.Admin.Query(r.ctx, `SELECT event_id FROM ops.outbox_facts
        WHERE published_at IS NULL AND parked_at IS NULL AND (next_attempt_at IS NULL OR next_attempt_at <= clock_timestamp())`)
	r.must(err, "relay0's rows")
	held := map[uuid.UUID]bool{}
	for rows.Next() {
		var id uuid.UUID
		r.must(rows.Scan(&id), "relay0's rows")
		held[id] = true
	}
	r.must(rows.Err(), "relay0's rows")
	var leased bool
	r.must(r.env.Admin.QueryRow(r.ctx, `UPDATE ops.relay_lease SET lease_until = lease_until - make_interval(secs => $1)
        WHERE holder IS NOT NULL AND lease_until > clock_timestamp() RETURNING true`, RelayLeaseElapsed.Seconds()).Scan(&leased), "relay0's lease ends")
	ids := make([]string, 0, len(held))
	for id := range held {
		ids = append(ids, id.String())
	}
	left := len(held)
	for pass := 0; pass < 20 && left > 0; pass++ {
		st1, err1 := r.newRelay(1, nil).DrainOnce(r.ctx)
		r.relayFailed(err1, "relay1 after relay0's lease ended")
		r.must(r.env.Admin.QueryRow(r.ctx, `SELECT count(*) FROM ops.outbox_facts
            WHERE event_id = ANY($1::uuid[]) AND published_at IS NULL AND parked_at IS NULL`, ids).Scan(&left), "relay0's rows")
		if err1 != nil || st1.Published == 0 {
			break
		}
	}
	if left > 0 {
		r.res.violate(VRelayHeldBack, "relay0 froze holding %d rows; %d still unpublished after its lease ended and relay1 passed", len(held), left)
	}
	close(gate)
	<-done
	r.relayFailed(err0, "relay0 after waking")
	r.tracef("relay froze: relay0's lease on %d rows ended; relay1 left %d unpublished", len(held), left)
}
