package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	wsql "github.com/ThreeDotsLabs/watermill-sql/v4/pkg/sql"
	"github.com/ThreeDotsLabs/watermill/components/forwarder"
	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// RelayResults: facts per second from a backlog in Postgres to an
// in-memory sink: the rail's Relay (outbox -> Publisher) against
// watermill-sql's forwarder (forwarder topic table -> watermill Publisher).
type RelayResults struct {
	Facts          int      `json:"facts_per_rep"`
	Rail           Series   `json:"rail_facts_per_s"`
	Watermill      Series   `json:"watermill_facts_per_s"`
	RailBatch      int      `json:"rail_batch"`
	Notes          []string `json:"notes"`
	RailPasses     Series   `json:"rail_passes"`
	WatermillDupes int      `json:"watermill_duplicates"`
	// Counted per fact relayed (server-side deltas over the drain, every
	// pool closed first; round trips and statements on the drain's pool).
	RailRoundTrips      Series `json:"rail_round_trips_per_fact"`
	WatermillRoundTrips Series `json:"watermill_round_trips_per_fact"`
	RailStatements      Series `json:"rail_statements_per_fact"`
	WatermillStatements Series `json:"watermill_statements_per_fact"`
	RailRows            Series `json:"rail_rows_written_per_fact"`
	WatermillRows       Series `json:"watermill_rows_written_per_fact"`
	RailWAL             Series `json:"rail_wal_bytes_per_fact"`
	WatermillWAL        Series `json:"watermill_wal_bytes_per_fact"`
	RailXacts           Series `json:"rail_xacts_per_fact"`
	WatermillXacts      Series `json:"watermill_xacts_per_fact"`
}

// drainCost is one drain's counted cost.
type drainCost struct {
	c           dbCounters
	trips, stmt int64
}

// perFact lays a drain's counts over n facts.
func (d drainCost) perFact(n int) (trips, stmts, rows, wal, xacts float64) {
	f := float64(n)
	return float64(d.trips) / f, float64(d.stmt) / f, float64(d.c.rows) / f, float64(d.c.wal) / f, float64(d.c.xacts) / f
}

// memSink is the rail's Publisher: accepts every entry.
type memSink struct{ n atomic.Int64 }

func (s *memSink) Publish(_ context.Context, entries []rail.BusEntry) ([]rail.PublishResult, error) {
	out := make([]rail.PublishResult, len(entries))
	for i, e := range entries {
		out[i] = rail.PublishResult{EventID: e.EventID}
	}
	s.n.Add(int64(len(entries)))
	return out, nil
}

// countingPublisher is watermill's out-side: counts messages by UUID.
type countingPublisher struct {
	mu   sync.Mutex
	seen map[string]int
	n    atomic.Int64
}

func (p *countingPublisher) Publish(_ string, msgs ...*message.Message) error {
	p.mu.Lock()
	for _, m := range msgs {
		p.seen[m.UUID]++
	}
	p.mu.Unlock()
	p.n.Add(int64(len(msgs)))
	return nil
}

func (p *countingPublisher) Close() error { return nil }

func runRelay(ctx context.Context, e *env, o options) (*RelayResults, error) {
	batch := o.RelayBatch
	if batch <= 0 {
		batch = rail.DefaultRelayBatch
	}
	rr := &RelayResults{Facts: o.RelayFacts, RailBatch: batch, Notes: []string{
		"backlog of N facts written before the clock starts (rail: INSERT … generate_series into ops.domain_event_outbox; watermill: forwarder.Publisher over the watermill-sql publisher, 500 messages a call), then the clock runs until the sink has N",
		"rail: one Relay.Run (the Lambda's loop: passes back to back while they come back full), the relay's default batch unless -relay-batch (100 rows a pass, sent 10 a Publish call as for PutEvents); watermill: forwarder.NewForwarder over a watermill-sql subscriber (default PostgreSQL schema and offsets adapters, PollInterval 10ms) started when the clock starts (its start-up is inside the time)",
		"commit->publish latency p50/p99 not measured here",
		"unpublished facts earlier sections left in the outbox are deleted and the table vacuumed before the first repetition, so the rail relays the section's own backlog, as watermill does",
		"counted per fact (rail_* and watermill_* _per_fact): wire round trips and statements on the drain's own pool; rows written (sum of pg_stat_user_tables n_tup_ins+n_tup_upd+n_tup_del), WAL bytes (pg_stat_wal) and transactions (pg_stat_database.xact_commit), server-side deltas over the drain alone (the backlog is written before, every pool closed before each reading)",
	}}
	setup, err := e.pool(ctx, 8, nil)
	if err != nil {
		return nil, err
	}
	refs, err := createMatters(ctx, setup, 1, "relay ")
	setup.Close()
	if err != nil {
		return nil, err
	}
	// The section measures its own backlog. Facts earlier sections left
	// unpublished (the throughput section's frame.built facts: no relay
	// runs there, 22,000 in a default run) would be relayed first, inside
	// the time, a different workload from watermill's: they are removed,
	// and the table vacuumed, before the first repetition.
	if err := dropLeftoverFacts(ctx, e); err != nil {
		return nil, err
	}
	var railR, wmR, passes []float64
	var rt, wt, rs, ws, rrows, wrows, rwal, wwal, rx, wx []float64
	for rep := 1; rep <= o.Reps; rep++ {
		// Rail.
		setup, err := e.pool(ctx, 8, nil)
		if err != nil {
			return nil, err
		}
		_, err = setup.Exec(ctx, `INSERT INTO ops.domain_event_outbox (firm_id, matter_id, event_name, payload)
            SELECT $1, $2, 'document.uploaded', jsonb_build_object('document_id', gen_random_uuid()::text)
            FROM generate_series(1, $3::int)`, refs[0].FirmID, refs[0].MatterID, o.RelayFacts)
		setup.Close()
		if err != nil {
			return nil, err
		}
		before, err := readCounters(ctx, e)
		if err != nil {
			return nil, err
		}
		w := &wireCounter{}
		pool, err := e.pool(ctx, 8, w)
		if err != nil {
			return nil, err
		}
		if _, err := pool.Exec(ctx, `SELECT 1`); err != nil { // connect before the clock
			pool.Close()
			return nil, err
		}
		trips0, stmts0 := w.snapshot()
		sink := &memSink{}
		relay := &rail.Relay{Outbox: postgres.NewOutbox(pool), Publisher: sink, BatchSize: batch}
		rctx, cancel := context.WithCancel(ctx)
		var elapsed time.Duration
		start := time.Now()
		watched := make(chan struct{})
		go func() { // stop the relay once the sink has every fact
			defer close(watched)
			for sink.n.Load() < int64(o.RelayFacts) && rctx.Err() == nil {
				time.Sleep(time.Millisecond)
			}
			elapsed = time.Since(start)
			cancel()
		}()
		st, err := relay.Run(rctx, 2*time.Minute, 0)
		cancel()
		<-watched
		trips1, stmts1 := w.snapshot()
		pool.Close()
		if err != nil && rctx.Err() == nil {
			return nil, err
		}
		after, err := readCounters(ctx, e)
		if err != nil {
			return nil, err
		}
		a, b, c, d, x := drainCost{after.since(before), trips1 - trips0, stmts1 - stmts0}.perFact(o.RelayFacts)
		rt, rs, rrows, rwal, rx = append(rt, a), append(rs, b), append(rrows, c), append(rwal, d), append(rx, x)
		if sink.n.Load() < int64(o.RelayFacts) {
			return nil, fmt.Errorf("relay: %d of %d published", sink.n.Load(), o.RelayFacts)
		}
		railR = append(railR, float64(sink.n.Load())/elapsed.Seconds())
		passes = append(passes, float64(st.Passes))

		// watermill-sql forwarder.
		r, dupes, cost, err := watermillRep(ctx, e, rep, o.RelayFacts)
		if err != nil {
			return nil, fmt.Errorf("watermill: %w", err)
		}
		wmR = append(wmR, r)
		rr.WatermillDupes += dupes
		a, b, c, d, x = cost.perFact(o.RelayFacts)
		wt, ws, wrows, wwal, wx = append(wt, a), append(ws, b), append(wrows, c), append(wwal, d), append(wx, x)
		logf("relay rep %d/%d: rail %.0f facts/s, watermill forwarder %.0f facts/s; per fact rail %.3f round trips %.2f rows %.0f WAL bytes, watermill %.3f round trips %.2f rows %.0f WAL bytes",
			rep, o.Reps, railR[rep-1], r, rt[rep-1], rrows[rep-1], rwal[rep-1], wt[rep-1], wrows[rep-1], wwal[rep-1])
	}
	rr.Rail, rr.Watermill, rr.RailPasses = series("facts/s", railR), series("facts/s", wmR), series("passes", passes)
	rr.RailRoundTrips, rr.WatermillRoundTrips = series("round trips/fact", rt), series("round trips/fact", wt)
	rr.RailStatements, rr.WatermillStatements = series("statements/fact", rs), series("statements/fact", ws)
	rr.RailRows, rr.WatermillRows = series("rows/fact", rrows), series("rows/fact", wrows)
	rr.RailWAL, rr.WatermillWAL = series("WAL bytes/fact", rwal), series("WAL bytes/fact", wwal)
	rr.RailXacts, rr.WatermillXacts = series("transactions/fact", rx), series("transactions/fact", wx)
	return rr, nil
}

func watermillRep(ctx context.Context, e *env, rep, n int) (float64, int, drainCost, error) {
	var cost drainCost
	logger := watermill.NopLogger{}
	setup, err := e.pool(ctx, 8, nil)
	if err != nil {
		return 0, 0, cost, err
	}
	defer setup.Close()
	db := wsql.BeginnerFromPgx(setup)
	fwdTopic := fmt.Sprintf("bench_forwarder_%d", rep)
	sqlPub, err := wsql.NewPublisher(db, wsql.PublisherConfig{
		SchemaAdapter: wsql.DefaultPostgreSQLSchema{}, AutoInitializeSchema: true}, logger)
	if err != nil {
		return 0, 0, cost, err
	}
	pub := forwarder.NewPublisher(sqlPub, forwarder.PublisherConfig{ForwarderTopic: fwdTopic})
	const chunk = 500
	for i := 0; i < n; i += chunk {
		msgs := make([]*message.Message, 0, chunk)
		for j := i; j < min(n, i+chunk); j++ {
			msgs = append(msgs, message.NewMessage(watermill.NewUUID(), []byte(`{"document_id":"x"}`)))
		}
		if err := pub.Publish("facts", msgs...); err != nil {
			return 0, 0, cost, err
		}
	}
	setup.Close()
	before, err := readCounters(ctx, e)
	if err != nil {
		return 0, 0, cost, err
	}
	w := &wireCounter{}
	pool, err := e.pool(ctx, 8, w)
	if err != nil {
		return 0, 0, cost, err
	}
	defer pool.Close()
	if _, err := pool.Exec(ctx, `SELECT 1`); err != nil { // connect before the clock
		return 0, 0, cost, err
	}
	trips0, stmts0 := w.snapshot()
	db = wsql.BeginnerFromPgx(pool)
	sub, err := wsql.NewSubscriber(db, wsql.SubscriberConfig{
		ConsumerGroup:    "bench",
		PollInterval:     10 * time.Millisecond,
		SchemaAdapter:    wsql.DefaultPostgreSQLSchema{},
		OffsetsAdapter:   wsql.DefaultPostgreSQLOffsetsAdapter{},
		InitializeSchema: true,
	}, logger)
	if err != nil {
		return 0, 0, cost, err
	}
	out := &countingPublisher{seen: map[string]int{}}
	fwd, err := forwarder.NewForwarder(sub, out, logger, forwarder.Config{ForwarderTopic: fwdTopic})
	if err != nil {
		return 0, 0, cost, err
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- fwd.Run(rctx) }()
	deadline := time.Now().Add(2 * time.Minute)
	for out.n.Load() < int64(n) {
		if time.Now().After(deadline) {
			return 0, 0, cost, fmt.Errorf("%d of %d forwarded", out.n.Load(), n)
		}
		time.Sleep(2 * time.Millisecond)
	}
	rate := float64(out.n.Load()) / time.Since(start).Seconds()
	cancel()
	_ = fwd.Close()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
	}
	trips1, stmts1 := w.snapshot()
	pool.Close()
	after, err := readCounters(ctx, e)
	if err != nil {
		return 0, 0, cost, err
	}
	cost = drainCost{after.since(before), trips1 - trips0, stmts1 - stmts0}
	dupes := 0
	out.mu.Lock()
	for _, c := range out.seen {
		dupes += c - 1
	}
	out.mu.Unlock()
	return rate, dupes, cost, nil
}

// dropLeftoverFacts deletes the outbox's unpublished facts, saying how
// many, and vacuums the table (outside any timed part).
func dropLeftoverFacts(ctx context.Context, e *env) error {
	pool, err := e.pool(ctx, 1, nil)
	if err != nil {
		return err
	}
	defer pool.Close()
	tag, err := pool.Exec(ctx, `DELETE FROM ops.domain_event_outbox WHERE event_id IN (SELECT event_id FROM ops.outbox_facts WHERE published_at IS NULL)`)
	if err != nil {
		return fmt.Errorf("relay: drop facts earlier sections left: %w", err)
	}
	if n := tag.RowsAffected(); n > 0 {
		logf("relay: %d unpublished facts left by earlier sections removed before the section", n)
	}
	if _, err := pool.Exec(ctx, `VACUUM ANALYZE ops.domain_event_outbox`); err != nil {
		return fmt.Errorf("relay: vacuum the outbox: %w", err)
	}
	return nil
}
