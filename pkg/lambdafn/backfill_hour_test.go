package lambdafn_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pramaan/brief-rail/internal/testenv/railtest"
	"github.com/pramaan/brief-rail/pkg/aws/bedrock"
	"github.com/pramaan/brief-rail/pkg/emf"
	"github.com/pramaan/brief-rail/pkg/lambdafn"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// The backfill's hour at the deployed defaults (RAIL_BACKFILL_RATE 30 a
// minute, RAIL_BACKFILL_CONCURRENCY 2, one sweep a minute), through the
// sweeper's own handler over PostgreSQL: a simulated hour of 60 passes,
// each followed by a minute of the backfill queue's two builders (FIFO,
// each build `build` long), the database's record of time moved back a
// minute after each. Before the fix admission was bounded by the builders
// in flight at each pass (2), so an hour admitted 120 whatever the rate
// or the builders' speed: a model change over 20,000 matters took a week,
// not the 11 hours the rate implies.
func TestBackfillHourAtTheDeployedDefaults(t *testing.T) {
	t.Run("builders that keep up get the rate", func(t *testing.T) {
		// Two builders of 3 s serve 40 a minute: the rate (30) is the bound.
		h := runBackfillHour(t, 2_000, 3*time.Second)
		if h.served < 1_500 || h.admitted > 1_800+30 {
			t.Fatalf("an hour admitted %d and served %d: want the rate's 1,800 less the ramp (at least 1,500), never more than the rate", h.admitted, h.served)
		}
		// The ETA at the start (same rule, one place): the hour's own
		// served count is projected to take an hour.
		if eta, _ := rail.BackfillETA(h.served, 30, 2, rail.BackfillLoad{}); math.Abs(eta-3600) > 120 {
			t.Fatalf("BackfillETA(%d served in the hour) = %.0f s: want 3,600 ± 120", h.served, eta)
		}
		if h.start.ETASeconds < 2_000*2 || h.start.ETASeconds > 2_000*2+20*60 {
			t.Fatalf("status at the start: ETA %.0f s for 2,000 at 30/min: want the rate's 4,000 s plus at most 20 min of ramp", h.start.ETASeconds)
		}
		h.noFlood(t, 2)
	})
	t.Run("builders slower than the rate set the pace", func(t *testing.T) {
		// Two builders of 30 s (a model call) serve 4 a minute.
		h := runBackfillHour(t, 400, 30*time.Second)
		if h.served < 230 || h.served > 240 {
			t.Fatalf("an hour served %d: want the builders' 4 a minute (230-240)", h.served)
		}
		// Status mid-hour: the builders are behind and their pace, not
		// the rate, is the ETA's.
		mid, left := h.mid, h.mid.Outdated
		if !mid.BuildersBehind || mid.PacePerMinute != 4 || math.Abs(mid.ETASeconds-float64(left)*15) > 120 {
			t.Fatalf("status mid-hour %+v: want builders behind, pace 4/min, ETA %d matters x 15 s ± 2 min", mid, left)
		}
		h.noFlood(t, 2)
	})
}

type backfillHour struct {
	admitted, served int
	maxQueued        int // backfill nudges waiting on the queue after a pass
	maxUnserved      int // admitted and unserved after a pass (queued or building)
	maxRoom          int // the bound on that: concurrency + served in the window before the pass
	renudged, live   int // the sweeper's re-nudges of backfill demand; nudges on the live queue
	start, mid       rail.BackfillStatus
}

// noFlood: the backfill queue never held more than the builders served in
// a window plus their concurrency, no admitted nudge waited past the
// sweeper's grace (its re-nudge would double it on the queue), and
// nothing went to the live queue.
func (h backfillHour) noFlood(t *testing.T, concurrency int) {
	t.Helper()
	if h.maxUnserved > h.maxRoom || h.renudged != 0 || h.live != 0 {
		t.Fatalf("hour %+v: want unserved backfill within concurrency + served in the window, no re-nudges, nothing on the live queue", h)
	}
}

// queueLog is the backfill queue: the nudges the sweeper sends, FIFO.
type queueLog struct {
	mu sync.Mutex
	q  []rail.MatterRef
	n  int
}

func (l *queueLog) Nudge(_ context.Context, ns []rail.Nudge, _ time.Duration) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, n := range ns {
		l.q = append(l.q, n.Ref())
		l.n++
	}
	return nil
}

func (l *queueLog) pop() (rail.MatterRef, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.q) == 0 {
		return rail.MatterRef{}, false
	}
	ref := l.q[0]
	l.q = l.q[1:]
	return ref, true
}

type modelB struct{ id rail.BuilderIdentity }

func (b modelB) Name() string                   { return b.id.Name }
func (b modelB) Identity() rail.BuilderIdentity { return b.id }
func (b modelB) Build(_ context.Context, in rail.Inputs) (json.RawMessage, error) {
	return json.Marshal(map[string]string{"title": in.Title, "by": b.id.ModelID})
}

func runBackfillHour(t *testing.T, matters int, build time.Duration) backfillHour {
	t.Helper()
	if time.Minute%build != 0 {
		t.Fatalf("build time %s must divide a minute", build)
	}
	ctx := context.Background()
	db := railtest.NewDB(t)
	seedOutdated(t, ctx, db.Pool, matters, bedrock.Identity("model-a"))
	cfg, err := lambdafn.LoadConfig(lambdafn.Sweeper, func(k string) string {
		return map[string]string{lambdafn.EnvBuildQueueURL: "unused: the nudger is given",
			lambdafn.EnvBackfillQueue: "unused: the nudger is given",
			lambdafn.EnvBriefBuilder:  "bedrock", lambdafn.EnvBedrockModelID: "model-b"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	// The deployed defaults (the template's BackfillBuildsPerMinute and
	// BackfillConcurrency; samtemplate's tests hold those to these).
	if cfg.BackfillRate != 30 || cfg.BackfillConcurrency != 2 {
		t.Fatalf("defaults: rate %v, concurrency %d: want 30 and 2", cfg.BackfillRate, cfg.BackfillConcurrency)
	}
	live, queue := &nudgeLog{}, &queueLog{}
	h := lambdafn.NewSweeper(cfg, lambdafn.Deps{Pool: db.Pool, Nudger: live, BackfillNudger: queue,
		Metrics: emf.New(&strings.Builder{}), Log: slog.New(slog.DiscardHandler)})
	bf := h.Sweeper.Backfill
	deployed := bedrock.Identity("model-b")
	ledger := postgres.NewLedger(db.Pool, cfg.RailConfig())
	workers := make([]*rail.Worker, cfg.BackfillConcurrency)
	for i := range workers {
		workers[i] = &rail.Worker{Ledger: ledger, Builder: modelB{deployed}, ID: fmt.Sprintf("backfill-%d", i), Heartbeat: -1}
	}
	travel := timeTravel(t, ctx, db.Pool)
	var hr backfillHour
	if hr.start, err = bf.Status(ctx); err != nil {
		t.Fatal(err)
	}
	slots := int(time.Minute / build)
	for minute := range 60 {
		if minute == 30 {
			if hr.mid, err = bf.Status(ctx); err != nil {
				t.Fatal(err)
			}
		}
		// The minute starts now by the database clock; the real time the
		// minute's work takes is part of its simulated minute, not added
		// to it (a loaded machine must not stretch the hour).
		// (Kept as the database's epoch seconds: never a client clock.)
		var t0 float64
		if err := db.Pool.QueryRow(ctx, `SELECT extract(epoch FROM clock_timestamp())::float8`).Scan(&t0); err != nil {
			t.Fatal(err)
		}
		res, err := h.Handle(ctx, lambdafn.ScheduleEvent{Source: "brief-rail.schedule", Task: lambdafn.Sweeper})
		if err != nil {
			t.Fatalf("minute %d: sweep: %v", minute, err)
		}
		hr.admitted += res.Backfilled
		hr.renudged += res.RenudgedBackfill
		hr.maxRoom = max(hr.maxRoom, cfg.BackfillConcurrency+res.BackfillServed)
		hr.maxUnserved = max(hr.maxUnserved, res.BackfillInFlight+res.Backfilled)
		hr.maxQueued = max(hr.maxQueued, len(queue.q))
		// A minute of builds: each builder takes the next nudge at the
		// start of each slot and lands it at the slot's end.
		type done struct {
			ref    rail.MatterRef
			offset float64
		}
		var landed []done
		for slot := range slots {
			for _, w := range workers {
				ref, ok := queue.pop()
				if !ok {
					break
				}
				out, err := w.BuildOnce(ctx, ref)
				if err != nil || !out.Landed {
					t.Fatalf("minute %d: backfill build of %v: %+v %v", minute, ref, out, err)
				}
				landed = append(landed, done{ref, float64(slot+1) * build.Seconds()})
			}
		}
		hr.served += len(landed)
		// Each build served its demand at its own time in the minute.
		for _, d := range landed {
			if _, err := db.Pool.Exec(ctx, `UPDATE ops.matter_demands SET served_at = to_timestamp($3::float8) + make_interval(secs => $4)
                WHERE firm_id = $1 AND matter_id = $2 AND source = 'backfill' AND served_at >= to_timestamp($3::float8)`,
				d.ref.FirmID, d.ref.MatterID, t0, d.offset); err != nil {
				t.Fatal(err)
			}
		}
		// Then the rest of the minute passes.
		var spent time.Duration
		if err := db.Pool.QueryRow(ctx, `SELECT ((extract(epoch FROM clock_timestamp()) - $1::float8) * 1e9)::int8`, t0).Scan(&spent); err != nil {
			t.Fatal(err)
		}
		if spent >= time.Minute {
			t.Fatalf("minute %d: its work took %s of real time, more than the minute it simulates", minute, spent)
		}
		travel(time.Minute - spent)
	}
	hr.live = len(live.sent)
	t.Logf("hour: %d matters, builds of %s: admitted %d, served %d, max unserved %d (bound %d), max queued %d; status at the start %+v, mid-hour %+v",
		matters, build, hr.admitted, hr.served, hr.maxUnserved, hr.maxRoom, hr.maxQueued, hr.start, hr.mid)
	return hr
}

// seedOutdated creates n open matters (over 20 firms) whose Brief was
// built by old.
func seedOutdated(t *testing.T, ctx context.Context, pool *pgxpool.Pool, n int, old rail.BuilderIdentity) {
	t.Helper()
	firms := make([]string, 20) // text: the pool may run in exec mode, which has no plan for []uuid.UUID
	for i := range firms {
		firms[i] = uuid.NewString()
	}
	fs, ms := make([]string, n), make([]string, n)
	for i := range n {
		fs[i], ms[i] = firms[i%len(firms)], uuid.NewString()
	}
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO app.firms (firm_id, name) SELECT f, 'firm ' || f FROM unnest($1::text[]::uuid[]) AS f`, []any{firms}},
		{`INSERT INTO app.matters (firm_id, matter_id, title) SELECT f, m, 'matter ' || m FROM unnest($1::text[]::uuid[], $2::text[]::uuid[]) AS u(f, m)`, []any{fs, ms}},
		{`INSERT INTO ops.matter_frame_jobs
            (firm_id, matter_id, requested_generation, claimed_generation, target_generation, built_generation, built_by)
          SELECT firm_id, matter_id, 1, 1, 1, 1, ` + postgres.SQLIdentityKey("$1::text", "$2::text", "$3::text", "$4::text") + ` FROM app.matters`,
			[]any{old.Name, old.Version, old.ModelID, old.PromptHash}},
		{`INSERT INTO ops.matter_frames (firm_id, matter_id, token, target_generation, fingerprint,
            builder, model_invoked, body, builder_version, model_id, prompt_hash)
          SELECT firm_id, matter_id, 1, 1, 'yesterday', $1, true, '{}'::jsonb, $2, $3, $4 FROM app.matters`,
			[]any{old.Name, old.Version, old.ModelID, old.PromptHash}},
		// Time travel moves the control row back too: start with a full bucket.
		{`UPDATE ops.backfill_control SET allowance_at = clock_timestamp() - interval '1 minute'`, nil},
	} {
		if _, err := pool.Exec(ctx, q.sql, q.args...); err != nil {
			t.Fatalf("seed: %v", err)
		}
	}
}

// timeTravel returns a function that moves every timestamptz column of the
// ledger's tables back by d: to the rail, d has passed (the database clock
// itself is never replaced).
func timeTravel(t *testing.T, ctx context.Context, pool *pgxpool.Pool) func(d time.Duration) {
	t.Helper()
	rows, err := pool.Query(ctx, `SELECT format('UPDATE %I.%I SET ', table_schema, table_name) ||
            string_agg(format('%1$I = %1$I - make_interval(secs => $1)', column_name), ', ')
        FROM information_schema.columns c JOIN information_schema.tables USING (table_schema, table_name)
        WHERE table_schema = 'ops' AND data_type = 'timestamp with time zone' AND table_type = 'BASE TABLE'
        GROUP BY table_schema, table_name`)
	if err != nil {
		t.Fatal(err)
	}
	var stmts []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		stmts = append(stmts, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return func(d time.Duration) {
		for _, s := range stmts {
			if _, err := pool.Exec(ctx, s, d.Seconds()); err != nil {
				t.Fatalf("time travel: %s: %v", s, err)
			}
		}
	}
}
