package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pramaan/brief-rail/pkg/app"
	"github.com/pramaan/brief-rail/pkg/aws/bedrock"
	"github.com/pramaan/brief-rail/pkg/emf"
	"github.com/pramaan/brief-rail/pkg/lambdafn"
	"github.com/pramaan/brief-rail/pkg/localbus"
	"github.com/pramaan/brief-rail/pkg/pgconn"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
	"github.com/pramaan/brief-rail/pkg/record"
	railsql "github.com/pramaan/brief-rail/sql"
)

// Section `day`: a working day of a multi-tenant deployment, compressed in
// time, through the local rail (the functions' own handlers as pkg/app
// assembles them, over pkg/localbus's in-process bus and queues, driven by
// app.RunLocal: what make run runs). Each scale runs on a fresh database
// of its own; per-upload figures are deltas of the server's own counters.

// dayOptions are the section's flags.
type dayOptions struct {
	Scales      []float64     `json:"scales"`
	Firms       int           `json:"firms"`
	Uploads     int           `json:"uploads_at_full_scale"`
	Matters     int           `json:"matters_at_full_scale"`
	Length      time.Duration `json:"day_length_ns"` // at scale 1
	FixedLength bool          `json:"fixed_length"`  // every scale's day is Length (else Length x scale)
	BuildReal   time.Duration `json:"build_time_real_ns"`
	Builders    int           `json:"builder_concurrency"`
	Backfillers int           `json:"backfill_concurrency"`
	ZipfS       float64       `json:"zipf_s"`
	Seed        uint64        `json:"seed"`
}

const realDay = 24 * time.Hour

// dayIdle: how long the idle rail's floor is measured, before each day.
const dayIdle = 10 * time.Second

// DayResults is the section's output.
type DayResults struct {
	Options dayOptions `json:"options"`
	Scales  []DayScale `json:"scales"`
	Notes   []string   `json:"notes"`
}

// DayLatency is upload -> current for one firm-size class, milliseconds of
// compressed time (the database clock).
type DayLatency struct {
	N   int     `json:"uploads_served"`
	P50 float64 `json:"p50_ms"`
	P99 float64 `json:"p99_ms"`
	Max float64 `json:"max_ms"`
}

// DayScale is one scale's run.
type DayScale struct {
	Scale       float64 `json:"scale"`
	Length      string  `json:"day_length"`
	Compression float64 `json:"compression"` // real seconds per compressed second
	BuildTime   string  `json:"build_time_compressed"`
	SettleDelay string  `json:"settle_delay_compressed"`
	SweepEvery  string  `json:"sweep_every"`
	BackfillPM  float64 `json:"backfill_rate_per_minute"`
	Firms       int     `json:"firms"`
	Matters     int     `json:"matters"`
	Uploads     int     `json:"uploads"`
	Sessions    int     `json:"sessions"`
	Regenerates int     `json:"regenerates"`
	Closes      int     `json:"closes"`
	Wall        string  `json:"wall"`
	Drain       string  `json:"drain_after_day"`
	GenLagMaxMs float64 `json:"generator_lag_max_ms"`

	Latency         map[string]DayLatency `json:"upload_to_current"`
	UploadsUnserved int                   `json:"uploads_not_current_at_end"`
	UploadsHeld     int                   `json:"uploads_held_by_a_close"`

	Builds          int64   `json:"builds_landed"`
	BuildsBackfill  int64   `json:"builds_landed_backfill_only"`
	Claims          int64   `json:"claims"`
	ModelCalls      int64   `json:"model_calls"`
	BuildsPerUpload float64 `json:"builds_per_upload"`
	ModelPerUpload  float64 `json:"model_calls_per_upload"`
	OutdatedAtEnd   int     `json:"outdated_matters_at_end"`

	XactCommit      int64            `json:"xact_commit"`
	XactRollback    int64            `json:"xact_rollback"`
	XactGenerator   int64            `json:"xact_generator"`
	XactPerUpload   float64          `json:"xact_per_upload"`
	RailXactPerUp   float64          `json:"rail_xact_per_upload"`
	WALBytes        int64            `json:"wal_bytes"`
	WALPerUpload    float64          `json:"wal_bytes_per_upload"`
	DBCPUPeak       float64          `json:"db_cpu_peak_cores"`
	DBCPUSeconds    float64          `json:"db_cpu_seconds"`
	DBCPUmsPerUp    float64          `json:"db_cpu_ms_per_upload"`
	PeakUploadsPerS float64          `json:"peak_uploads_per_s"`
	Errors          map[string]int64 `json:"handler_errors"`
	Sweeps          int64            `json:"sweeper_invocations"`
	// The idle rail's floor, per second (measured before the day), and
	// the day's figures less that floor over the day's wall time: the
	// work each upload adds.
	IdleXactPerS   float64 `json:"idle_xact_per_s"`
	IdleWALPerS    float64 `json:"idle_wal_bytes_per_s"`
	IdleCPUCores   float64 `json:"idle_db_cpu_cores"`
	MargXactPerUp  float64 `json:"marginal_rail_xact_per_upload"`
	MargWALPerUp   float64 `json:"marginal_wal_bytes_per_upload"`
	MargCPUmsPerUp float64 `json:"marginal_db_cpu_ms_per_upload"`
	RelayRuns      int64   `json:"relay_invocations"`

	// From pg_stat_statements (-day-statements): each statement's calls
	// and execution time over the day, and the same grouped by the handler
	// that issues it; idle: its rate in the idle window before the day.
	Statements []DayStatement        `json:"statements,omitempty"`
	Handlers   map[string]DayHandler `json:"by_handler,omitempty"`
	// Read off Statements: explicit transactions (BEGIN), the trigger's
	// inbox transactions and the builder's claim statements per upload;
	// the sweeper's and backfill's execution time per pass, and the
	// frame-pruning pass's share of it.
	ExplicitXactPerUp float64 `json:"explicit_xact_per_upload,omitempty"`
	InboxXactPerUp    float64 `json:"trigger_inbox_xact_per_upload,omitempty"`
	ClaimsPerUp       float64 `json:"claim_statements_per_upload,omitempty"`
	SweepMsPerPass    float64 `json:"sweeper_exec_ms_per_pass,omitempty"`
	PruneMsPerPass    float64 `json:"frame_prune_exec_ms_per_pass,omitempty"`
}

// DayStatement is one normalised statement's work over a scale's day.
type DayStatement struct {
	Handler       string  `json:"handler"`
	Query         string  `json:"query"`
	Calls         int64   `json:"calls"`
	Rows          int64   `json:"rows"`
	ExecMs        float64 `json:"exec_ms"`
	IdleCallsPerS float64 `json:"idle_calls_per_s"`
	IdleMsPerS    float64 `json:"idle_exec_ms_per_s"`
}

// DayHandler is a handler's statements per upload: all of them, and
// less the idle rail's rate over the day's wall time (marginal).
type DayHandler struct {
	CallsPerUpload     float64 `json:"calls_per_upload"`
	MargCallsPerUpload float64 `json:"marginal_calls_per_upload"`
	ExecMsPerUpload    float64 `json:"exec_ms_per_upload"`
	MargExecMsPerUp    float64 `json:"marginal_exec_ms_per_upload"`
	Calls              int64   `json:"calls"`
}

// dayClass is a firm's size class by its Zipf rank.
func dayClass(rank int) string {
	switch {
	case rank <= 20:
		return "large"
	case rank <= 200:
		return "medium"
	}
	return "small"
}

var dayClasses = []string{"small", "medium", "large", "all"}

func parseScales(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		x, err := strconv.ParseFloat(f, 64)
		if err != nil || x <= 0 || x > 1 {
			return nil, fmt.Errorf("bad scale %q (want 0 < x <= 1)", f)
		}
		out = append(out, x)
	}
	return out, nil
}

// dayEvent is one thing the host application does at offset At of the
// compressed day.
type dayEvent struct {
	At     time.Duration
	Kind   byte // 'u' upload, 'r' regenerate, 'c' close
	Matter int
	Seq    int
}

// dayWorkload: firms of Zipf sizes, their matters, and the day's events.
type dayWorkload struct {
	firmIDs    []uuid.UUID
	matters    []rail.MatterRef
	matterRank []int // the firm's rank (1 = largest)
	events     []dayEvent
	uploads    int
	sessions   int
	regens     int
	closes     int
}

// dayDensity is the relative upload rate at hour h of the day: a
// working-hours peak (09-12, 13-17) with a lunch dip and ramps, a trickle
// at night.
func dayDensity(h float64) float64 {
	switch {
	case h < 7 || h >= 20:
		return 0.03
	case h < 9:
		return 0.03 + 0.97*(h-7)/2
	case h < 12:
		return 1
	case h < 13:
		return 0.6
	case h < 17:
		return 1
	default:
		return 1 - 0.97*(h-17)/3
	}
}

func buildDayWorkload(o dayOptions, scale float64) dayWorkload {
	rng := rand.New(rand.NewPCG(o.Seed, uint64(scale*1e6)))
	var w dayWorkload
	weights := make([]float64, o.Firms)
	var sum float64
	for i := range weights {
		weights[i] = 1 / math.Pow(float64(i+1), o.ZipfS)
		sum += weights[i]
	}
	cum := make([]float64, o.Firms)
	acc := 0.0
	for i, x := range weights {
		acc += x / sum
		cum[i] = acc
	}
	matters := int(math.Round(float64(o.Matters) * scale))
	firmMatters := make([][]int, o.Firms)
	for i := range o.Firms {
		id := uuid.New()
		w.firmIDs = append(w.firmIDs, id)
		n := max(1, int(math.Round(float64(matters)*weights[i]/sum)))
		for range n {
			firmMatters[i] = append(firmMatters[i], len(w.matters))
			w.matters = append(w.matters, rail.MatterRef{FirmID: id, MatterID: uuid.New()})
			w.matterRank = append(w.matterRank, i+1)
		}
	}
	pickFirm := func() int {
		x := rng.Float64()
		i := sort.SearchFloat64s(cum, x)
		return min(i, o.Firms-1)
	}
	c := float64(realDay) / float64(o.Length)
	real := func(d time.Duration) time.Duration { return time.Duration(float64(d) / c) }
	// Session starts, by rejection sampling of the day's profile.
	target := int(math.Round(float64(o.Uploads) * scale))
	type session struct {
		start time.Duration
		k     int
	}
	var sessions []session
	total := 0
	for total < target {
		var h float64
		for {
			h = rng.Float64() * 24
			if rng.Float64() < dayDensity(h) {
				break
			}
		}
		k := 1
		if rng.Float64() < 0.005 { // a bulk import
			k = 50 + rng.IntN(151)
		} else {
			for rng.Float64() < 0.6 && k < 12 { // geometric: mean 2.5
				k++
			}
		}
		k = min(k, target-total)
		total += k
		sessions = append(sessions, session{start: time.Duration(h / 24 * float64(o.Length)), k: k})
	}
	slices.SortFunc(sessions, func(a, b session) int { return int(a.start - b.start) })
	closed := make([]bool, len(w.matters))
	seq := 0
	for _, s := range sessions {
		f := pickFirm()
		var open []int
		for _, m := range firmMatters[f] {
			if !closed[m] {
				open = append(open, m)
			}
		}
		if len(open) == 0 {
			continue // every matter of this firm closed today: the session uploads nothing
		}
		m := open[rng.IntN(len(open))]
		t := s.start
		for range s.k {
			w.events = append(w.events, dayEvent{At: t, Kind: 'u', Matter: m, Seq: seq})
			seq++
			w.uploads++
			t += real(time.Duration(2+rng.IntN(19)) * time.Second) // 2-20 s between a person's uploads
		}
		w.sessions++
		if rng.Float64() < 0.1 { // a Regenerate five minutes later
			w.events = append(w.events, dayEvent{At: t + real(5*time.Minute), Kind: 'r', Matter: m})
			w.regens++
		}
		if len(open) > 1 && rng.Float64() < 0.01 { // the matter closes two hours later
			closed[m] = true
			w.events = append(w.events, dayEvent{At: t + real(2*time.Hour), Kind: 'c', Matter: m})
			w.closes++
		}
	}
	slices.SortStableFunc(w.events, func(a, b dayEvent) int { return int(a.At - b.At) })
	return w
}

// dayBuilder stands in for the model: a fixed build time, honouring ctx,
// under a Bedrock model's identity (so the sweeper's deployed identity,
// RAIL_BEDROCK_MODEL_ID, is the builder's own); it counts its calls.
type dayBuilder struct {
	id    rail.BuilderIdentity
	delay time.Duration
	calls *atomic.Int64
}

func (b dayBuilder) Name() string                   { return b.id.Name }
func (b dayBuilder) Identity() rail.BuilderIdentity { return b.id }
func (b dayBuilder) Build(ctx context.Context, in rail.Inputs) (json.RawMessage, error) {
	b.calls.Add(1)
	select {
	case <-time.After(b.delay):
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	return json.Marshal(map[string]any{"title": in.Title, "documents": len(in.Manifest), "by": b.id.ModelID})
}

// gatedSource is a queue a stopping rail's pollers read: once closed it
// receives nothing (after the long poll's wait), so no new invocation
// starts.
type gatedSource struct {
	localbus.Source
	closed *atomic.Bool
}

func (g gatedSource) Receive(ctx context.Context, max int, wait time.Duration) ([]events.SQSMessage, error) {
	if g.closed.Load() {
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		return nil, nil
	}
	return g.Source.Receive(ctx, max, wait)
}

// preloadStatements: the throwaway server loads pg_stat_statements (flag
// -day-statements, when section day runs).
var preloadStatements bool

type stmtStat struct {
	calls, rows int64
	ms          float64
}

// statements reads pg_stat_statements for database db, by query text
// (one text can have several query ids: one per role).
func statements(ctx context.Context, admin *pgx.Conn, db string) (map[string]stmtStat, error) {
	rows, err := admin.Query(ctx, `SELECT s.query, sum(s.calls)::bigint, sum(s.rows)::bigint, sum(s.total_exec_time)::float8
        FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = $1 GROUP BY s.query`, db)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]stmtStat{}
	for rows.Next() {
		var q string
		var s stmtStat
		if err := rows.Scan(&q, &s.calls, &s.rows, &s.ms); err != nil {
			return nil, err
		}
		out[q] = s
	}
	return out, rows.Err()
}

func resetStatements(ctx context.Context, admin *pgx.Conn, db string) error {
	_, err := admin.Exec(ctx, `SELECT pg_stat_statements_reset(0, (SELECT oid FROM pg_database WHERE datname = $1), 0)`, db)
	return err
}

// dayHandlerOf names the handler that issues a statement, from its
// normalised text (pg_stat_statements replaces constants with $n): the
// rail's statements are in pkg/postgres, the host application's in
// pkg/record, the section's own reads in this file. A nudge record (the
// trigger's, the builder's follow-ups, the sweeper's re-nudges and the
// backfill's admissions write the same statement) is its own class.
func dayHandlerOf(q string) string {
	q = strings.Join(strings.Fields(q), " ")
	pre := func(p string) bool { return strings.HasPrefix(q, p) }
	has := strings.Contains
	switch {
	case q == "begin" || q == "commit" || q == "rollback" || q == "BEGIN" || q == "COMMIT" || q == "ROLLBACK":
		return "tx"
	// The host application (record.StoreDocument, Regenerate, close).
	case pre("INSERT INTO app.documents"), pre("INSERT INTO ops.domain_event_outbox"),
		pre("SELECT status FROM app.matters WHERE firm_id = $1 AND matter_id = $2 FOR SHARE"),
		pre("SELECT firm_id FROM app.matters WHERE matter_id = $1"), pre("WITH m AS ( UPDATE app.matters SET status"):
		return "generator"
	// The section's own reads while it waits for the drain.
	case has(q, "unnest(event_ids) AS id FROM ops.matter_demands"), pre("SELECT count(*) FROM ops.matter_demands d JOIN app.matters m"),
		has(q, "pg_stat_clear_snapshot"):
		return "bench"
	case pre("WITH retry AS"), pre("UPDATE ops.domain_event_outbox SET published_at"), pre("UPDATE ops.domain_event_outbox SET"),
		pre("SELECT count(*), coalesce(extract($1 FROM clock_timestamp() - min(occurred_at)"):
		return "relay"
	case has(q, "INSERT INTO ops.trigger_inbox") && pre("WITH e AS"), has(q, "FROM ops.receive_facts("),
		pre("WITH m AS ( SELECT firm_id, matter_id, status FROM app.matters WHERE matter_id = $2 ), up AS ( INSERT INTO ops.matter_frame_jobs"):
		return "trigger"
	case pre("INSERT INTO ops.matter_nudges"):
		return "nudge records"
	case pre("WITH c AS ( UPDATE ops.matter_frame_jobs AS j SET run_status = $6, claimed_generation"), pre("SELECT ops.claimed_"),
		has(q, "FROM ops.claimed_"), pre("WITH fence AS"), pre("WITH members AS"), pre("UPDATE ops.matter_frame_jobs SET lease"), has(q, "heartbeat"):
		return "builder"
	case has(q, "ops.backfill_control"), pre("WITH o AS MATERIALIZED"),
		pre("WITH u AS ( SELECT d.since FROM (SELECT firm_id, matter_id, min(recorded_at) AS since FROM ops.matter_demands"):
		return "backfill"
	case pre("WITH q AS ( UPDATE ops.matter_frame_jobs"), pre("UPDATE ops.matter_frame_runs AS r SET outcome"),
		has(q, "AS backfill_only"), pre("SELECT count(*) FILTER (WHERE behind AND open"), pre("DELETE FROM"), pre("WITH doomed AS"),
		pre("WITH started AS"), pre("WITH cand AS"), has(q, "FROM ops.frame_prune_state"), has(q, "built_by IS NULL"):
		return "sweeper"
	}
	return "other"
}

// dayStatementsOf: the day's statements with their idle rates, and the
// handlers' sums per upload (marginal: less the idle rate over wall).
func dayStatementsOf(day, idle map[string]stmtStat, idleSecs, wall, uploads float64) ([]DayStatement, map[string]DayHandler) {
	var out []DayStatement
	h := map[string]DayHandler{}
	for q, s := range day {
		i := idle[q]
		st := DayStatement{Handler: dayHandlerOf(q), Query: q, Calls: s.calls, Rows: s.rows, ExecMs: round(s.ms, 1),
			IdleCallsPerS: round(float64(i.calls)/idleSecs, 2), IdleMsPerS: round(i.ms/idleSecs, 3)}
		out = append(out, st)
		x := h[st.Handler]
		x.Calls += s.calls
		x.CallsPerUpload += float64(s.calls) / uploads
		x.MargCallsPerUpload += (float64(s.calls) - float64(i.calls)/idleSecs*wall) / uploads
		x.ExecMsPerUpload += s.ms / uploads
		x.MargExecMsPerUp += (s.ms - i.ms/idleSecs*wall) / uploads
		h[st.Handler] = x
	}
	for k, x := range h {
		x.CallsPerUpload, x.MargCallsPerUpload = round(x.CallsPerUpload, 3), round(x.MargCallsPerUpload, 3)
		x.ExecMsPerUpload, x.MargExecMsPerUp = round(x.ExecMsPerUpload, 3), round(x.MargExecMsPerUp, 3)
		h[k] = x
	}
	slices.SortFunc(out, func(a, b DayStatement) int { return int(b.Calls - a.Calls) })
	return out, h
}

// dayCounters are the server's counters the day section reads.
type dayCounters struct {
	commit, rollback, wal int64
}

func readDayCounters(ctx context.Context, admin *pgx.Conn, db string) (dayCounters, error) {
	var c dayCounters
	_, _ = admin.Exec(ctx, `SELECT pg_stat_clear_snapshot()`)
	err := admin.QueryRow(ctx, `SELECT d.xact_commit, d.xact_rollback, w.wal_bytes::bigint
        FROM pg_stat_database d, pg_stat_wal w WHERE d.datname = $1`, db).Scan(&c.commit, &c.rollback, &c.wal)
	return c, err
}

// pgCPU samples the CPU time of the PostgreSQL server's processes from
// /proc: the postmaster's own and its reaped children's (cutime, cstime),
// plus every live child's (backends, walwriter, ...). Clock ticks at
// 100 Hz (USER_HZ on Linux).
type pgCPU struct{ postmaster int }

func newPgCPU(ctx context.Context, conn *pgx.Conn) (*pgCPU, error) {
	var backend int
	if err := conn.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&backend); err != nil {
		return nil, err
	}
	f, err := procStat(backend)
	if err != nil {
		return nil, fmt.Errorf("the server's processes are not on this machine's /proc: %w", err)
	}
	return &pgCPU{postmaster: f.ppid}, nil
}

type statFields struct {
	ppid                         int
	utime, stime, cutime, cstime int64
}

func procStat(pid int) (statFields, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return statFields{}, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return statFields{}, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 15 {
		return statFields{}, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	n := func(k int) int64 { x, _ := strconv.ParseInt(f[k], 10, 64); return x }
	return statFields{ppid: int(n(1)), utime: n(11), stime: n(12), cutime: n(13), cstime: n(14)}, nil
}

// seconds is the server's CPU time so far.
func (p *pgCPU) seconds() float64 {
	pm, err := procStat(p.postmaster)
	if err != nil {
		return math.NaN()
	}
	ticks := pm.utime + pm.stime + pm.cutime + pm.cstime
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == p.postmaster {
			continue
		}
		if f, err := procStat(pid); err == nil && f.ppid == p.postmaster {
			ticks += f.utime + f.stime
		}
	}
	return float64(ticks) / 100
}

func runDay(ctx context.Context, e *env, o dayOptions) (*DayResults, error) {
	r := &DayResults{Options: o, Notes: []string{
		"each scale's day is day_length x scale long unless -day-fixed-length (so every scale runs at the same upload rate, and the figures' growth is the growth with the day's volume: firms' matters, documents, frames and ledger rows, not this machine's saturation); its compression is 24 h / its day's length",
		"a day of 24 h compressed into day_length: every time of the workload (session starts, gaps between a person's uploads, the Regenerate 5 min and the close 2 h after a session) and the build time are divided by the compression; latencies are compressed milliseconds on the database clock (fact occurred_at -> the demand's served_at, the commit of the frame covering it)",
		"not compressed (the local rail's own timings, as make run's): the lease (10 s), queue timings (the template's x0.01), the relay's window (1 s) and the builder's backoff (1 s base); the sweeper runs every max(60 s compressed, 250 ms) (fewer passes than a real day's 1,440 at these compressions: its fixed cost per pass is under-counted)",
		"firms of Zipf sizes (weight 1/rank^s) get matters and sessions in proportion; a session is 1 + geometric uploads (mean 2.5, at most 12) on one matter, 0.5% are bulk imports of 50-200; 10% end in a Regenerate, 1% in a close (the matter gets no uploads after); size classes by rank: large 1-20, medium 21-200, small 201+",
		"every matter starts the day with a Brief built by model-a (yesterday's); at noon the rail is redeployed with model-b (a second app.Assemble and RunLocal on the same queues; the first one's pollers stop receiving, its invocations in flight finish, then it stops, as a Lambda deploy lets them), so the sweeper's backfill admits the outdated matters at 30 per real minute on the backfill queue",
		"transactions: pg_stat_database.xact_commit of the scale's own database (rail, generator and the section's reads); rail_xact_per_upload subtracts the generator's (one per upload, Regenerate and close) and the section's own reads while it waits for the drain; WAL: pg_stat_wal.wal_bytes (the whole server; nothing else runs in this section)",
		"database CPU: the PostgreSQL server's processes from /proc/<pid>/stat (the postmaster with its reaped children and every live backend), sampled each second; peak is the busiest second, in cores of this 2-core machine",
	}}
	for _, s := range o.Scales {
		ds, err := runDayScale(ctx, e, o, s)
		if err != nil {
			return nil, fmt.Errorf("scale %g: %w", s, err)
		}
		r.Scales = append(r.Scales, *ds)
	}
	return r, nil
}

func runDayScale(ctx context.Context, e *env, o dayOptions, scale float64) (*DayScale, error) {
	if !o.FixedLength {
		o.Length = time.Duration(float64(o.Length) * scale)
	}
	c := float64(realDay) / float64(o.Length)
	comp := func(d time.Duration) time.Duration { return time.Duration(float64(d) / c) }
	w := buildDayWorkload(o, scale)
	ds := &DayScale{Scale: scale, Firms: len(w.firmIDs), Matters: len(w.matters), Uploads: w.uploads, Sessions: w.sessions,
		Regenerates: w.regens, Closes: w.closes, Latency: map[string]DayLatency{}, Errors: map[string]int64{},
		Length: o.Length.String(), Compression: round(c, 1), BuildTime: comp(o.BuildReal).Round(100 * time.Microsecond).String(),
		SettleDelay: comp(10 * time.Second).Round(100 * time.Microsecond).String(), SweepEvery: max(comp(time.Minute), 250*time.Millisecond).String(),
		BackfillPM: math.Min(30*c, 10000)}
	db := fmt.Sprintf("%s_day_%d", e.benchDB, int(scale*1000))
	if err := e.adminExec(ctx, "CREATE DATABASE "+pgx.Identifier{db}.Sanitize()); err != nil {
		return nil, err
	}
	defer func() {
		_ = e.adminExec(context.WithoutCancel(ctx), "DROP DATABASE IF EXISTS "+pgx.Identifier{db}.Sanitize()+" WITH (FORCE)")
	}()
	logf("day %g: %d firms, %d matters, %d uploads in %d sessions, %d Regenerates, %d closes over %s",
		scale, ds.Firms, ds.Matters, ds.Uploads, ds.Sessions, ds.Regenerates, ds.Closes, o.Length)

	url := e.url(db)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := railsql.Migrate(ctx, conn, nil); err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	if err := seedDay(ctx, conn, w); err != nil {
		return nil, fmt.Errorf("seed: %w", err)
	}

	// The rail's pool, opened as the functions open theirs (exec mode).
	pool, err := app.OpenPool(ctx, func(k string) string {
		switch k {
		case pgconn.EnvDatabaseURL:
			return url
		case pgconn.EnvMaxConns:
			return "20"
		}
		return ""
	})
	if err != nil {
		return nil, err
	}
	poolClosed := false
	defer func() {
		if !poolClosed {
			pool.Close()
		}
	}()
	gen, err := pgxpool.New(ctx, url) // the host application's
	if err != nil {
		return nil, err
	}
	defer gen.Close()

	base, err := lambdafn.LoadOperatorConfig(func(string) string { return "" })
	if err != nil {
		return nil, err
	}
	cfg := app.LocalConfig(base, app.LocalTimings{Lease: 10 * time.Second, SettleDelay: comp(10 * time.Second),
		SweepGrace: max(comp(30*time.Second), 500*time.Millisecond)}, app.BuilderBedrock)
	cfg.BackfillRate = math.Min(30*c, 10000)
	cfg.BackfillConcurrency = o.Backfillers
	wiring, err := app.LocalWiring(filepath.Join(projectRootDir(), "template.yaml"), cfg, 0.01, 0)
	if err != nil {
		return nil, err
	}
	tr := app.LocalTransport(wiring, nil)
	var calls, sweeps, relays atomic.Int64
	var errMu sync.Mutex
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	start := func(model string) (stop func(), err error) {
		cfg := cfg
		cfg.BedrockModelID = model
		rl, err := app.Assemble(cfg, app.Deps{Pool: pool, Transport: tr, Log: quiet, Metrics: emf.New(io.Discard),
			Builder: dayBuilder{id: bedrock.Identity(model), delay: comp(o.BuildReal), calls: &calls}})
		if err != nil {
			return nil, err
		}
		rctx, cancel := context.WithCancel(ctx)
		// Stopping is a deploy's: the pollers stop receiving, invocations
		// in flight finish (as Lambda lets them), then the rest stops.
		gate := &atomic.Bool{}
		gated := func(src localbus.Source) localbus.Source { return gatedSource{Source: src, closed: gate} }
		wait := app.RunLocal(rctx, rl, app.LocalOptions{TriggerQueue: gated(tr.TriggerQueue), BuildQueue: gated(tr.BuildQueue),
			BackfillQueue: gated(tr.BackfillQueue), SweepEvery: max(comp(time.Minute), 250*time.Millisecond),
			BuilderConcurrency: o.Builders, BackfillConcurrency: o.Backfillers, TriggerConcurrency: 4,
			OnSweep: func(lambdafn.SweepResult) { sweeps.Add(1) }, OnRelay: func(lambdafn.RelayResult) { relays.Add(1) },
			OnError: func(fn string, err error) {
				errMu.Lock()
				ds.Errors[fn]++
				errMu.Unlock()
			}})
		return func() {
			gate.Store(true)
			time.Sleep(2*comp(o.BuildReal) + 2*time.Second) // the pollers' long poll, then the builds in flight
			cancel()
			wait()
		}, nil
	}

	admin, err := pgx.Connect(ctx, e.adminURL)
	if err != nil {
		return nil, err
	}
	defer admin.Close(context.WithoutCancel(ctx))
	cpu, cpuErr := newPgCPU(ctx, admin)
	if cpuErr != nil {
		logf("day: database CPU not sampled: %v", cpuErr)
	}
	before, err := readDayCounters(ctx, admin, db)
	if err != nil {
		return nil, err
	}
	cpu0 := math.NaN()
	if cpu != nil {
		cpu0 = cpu.seconds()
	}
	var framesBefore int64
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM ops.matter_frames`).Scan(&framesBefore); err != nil {
		return nil, err
	}

	stopA, err := start("model-a")
	if err != nil {
		return nil, err
	}
	stopRail := stopA
	// The rail idle (no uploads) for a while: its floor per second (the
	// relay's polls, the sweeper's passes, the pollers), which a real day
	// pays per real second, not per upload.
	time.Sleep(time.Second)
	idle0, err := readDayCounters(ctx, admin, db)
	if err != nil {
		stopRail()
		return nil, err
	}
	stmts := preloadStatements
	if stmts {
		if _, err := admin.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_stat_statements`); err != nil {
			logf("day: pg_stat_statements not available: %v", err)
			stmts = false
		} else if err := resetStatements(ctx, admin, db); err != nil {
			stopRail()
			return nil, err
		}
	}
	idleCPU0, idleAt := math.NaN(), time.Now()
	if cpu != nil {
		idleCPU0 = cpu.seconds()
	}
	time.Sleep(dayIdle)
	idle1, err := readDayCounters(ctx, admin, db)
	if err != nil {
		stopRail()
		return nil, err
	}
	idleSecs := time.Since(idleAt).Seconds()
	var idleStmts map[string]stmtStat
	if stmts {
		if idleStmts, err = statements(ctx, admin, db); err == nil {
			err = resetStatements(ctx, admin, db)
		}
		if err != nil {
			stopRail()
			return nil, err
		}
	}
	ds.IdleXactPerS = round(float64(idle1.commit-idle0.commit)/idleSecs, 1)
	ds.IdleWALPerS = round(float64(idle1.wal-idle0.wal)/idleSecs, 0)
	if cpu != nil {
		ds.IdleCPUCores = round((cpu.seconds()-idleCPU0)/idleSecs, 3)
	}
	before = idle1
	if cpu != nil {
		cpu0 = cpu.seconds()
	}
	began := time.Now()

	// Sample the database's CPU each second.
	sctx, stopSampler := context.WithCancel(ctx)
	defer stopSampler()
	var samplerWG sync.WaitGroup
	var peak float64
	if cpu != nil {
		samplerWG.Go(func() {
			last, lastAt := cpu.seconds(), time.Now()
			t := time.NewTicker(time.Second)
			defer t.Stop()
			for {
				select {
				case <-sctx.Done():
					return
				case <-t.C:
				}
				now, at := cpu.seconds(), time.Now()
				if x := (now - last) / at.Sub(lastAt).Seconds(); x > peak {
					peak = x
				}
				last, lastAt = now, at
			}
		})
	}

	// The host application: events at their times, by 16 workers.
	var genXacts atomic.Int64
	var lagMax atomic.Int64
	work := make(chan dayEvent, 4096)
	var genWG sync.WaitGroup
	var genErr atomic.Value
	for range 16 {
		genWG.Go(func() {
			for ev := range work {
				lag := int64(time.Since(began.Add(ev.At))) // how late the host application does it
				for m := lagMax.Load(); lag > m && !lagMax.CompareAndSwap(m, lag); m = lagMax.Load() {
				}
				ref := w.matters[ev.Matter]
				var err error
				switch ev.Kind {
				case 'u':
					_, err = record.StoreDocument(ctx, gen, ref, rail.NewDocument{Name: fmt.Sprintf("upload-%d.pdf", ev.Seq),
						Pages: []string{fmt.Sprintf("Exhibit %d: delivery of consignment %d.", ev.Seq, ev.Seq)}})
				case 'r':
					_, err = record.Regenerate(ctx, gen, ref)
				case 'c':
					err = postgres.SetMatterStatus(ctx, gen, ref, "closed")
				}
				genXacts.Add(1)
				if err != nil && genErr.Load() == nil {
					genErr.Store(err)
				}
			}
		})
	}
	noon := o.Length / 2
	var handover sync.WaitGroup
	defer handover.Wait()
	redeployed := false
	var perSecond []int
	for _, ev := range w.events {
		if !redeployed && ev.At >= noon {
			// The builder identity changes at noon: deploy model-b beside
			// model-a, then stop model-a.
			stopB, err := start("model-b")
			if err != nil {
				close(work)
				return nil, err
			}
			handover.Go(stopA)
			stopRail, redeployed = stopB, true
			logf("day %g: noon, redeployed with model-b", scale)
		}
		if d := time.Until(began.Add(ev.At)); d > 0 {
			time.Sleep(d)
		}
		if ev.Kind == 'u' {
			sec := int(ev.At / time.Second)
			for len(perSecond) <= sec {
				perSecond = append(perSecond, 0)
			}
			perSecond[sec]++
		}
		select {
		case work <- ev:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	close(work)
	genWG.Wait()
	if err, _ := genErr.Load().(error); err != nil {
		stopRail()
		stopSampler()
		return nil, fmt.Errorf("generator: %w", err)
	}
	dayEnd := time.Now()
	logf("day %g: the day's events sent in %s (lag at most %s); waiting for the uploads to be current",
		scale, dayEnd.Sub(began).Round(time.Millisecond), time.Duration(lagMax.Load()).Round(time.Millisecond))

	// Drain: every upload on an open matter served (a closed matter's
	// held demand is counted, not waited for).
	deadline := time.Now().Add(max(o.Length, 2*time.Minute))
	ownXacts := int64(1) // the frame count before the day
	for ctx.Err() == nil {
		var behind int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM ops.matter_demands d JOIN app.matters m USING (firm_id, matter_id)
            WHERE d.served_at IS NULL AND d.source = 'fact' AND m.status = 'open'`).Scan(&behind); err != nil {
			stopRail()
			stopSampler()
			return nil, err
		}
		var unheard int
		if err := conn.QueryRow(ctx, `WITH heard AS (SELECT unnest(event_ids) AS id FROM ops.matter_demands)
            SELECT count(*) FROM ops.domain_event_outbox o
            WHERE o.event_name = 'document.uploaded' AND NOT EXISTS (SELECT 1 FROM heard h WHERE h.id = o.event_id)`).Scan(&unheard); err != nil {
			stopRail()
			stopSampler()
			return nil, err
		}
		ownXacts += 2
		if behind == 0 && unheard == 0 {
			break
		}
		if time.Now().After(deadline) {
			logf("day %g: %d demands still unserved, %d uploads unheard at the drain deadline", scale, behind, unheard)
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	ds.Drain = time.Since(dayEnd).Round(time.Millisecond).String()
	stopRail()
	pool.Close()
	poolClosed = true
	gen.Close()
	ds.Wall = time.Since(began).Round(time.Millisecond).String()
	ds.GenLagMaxMs = round(ms(time.Duration(lagMax.Load())), 1)
	for _, n := range perSecond {
		ds.PeakUploadsPerS = max(ds.PeakUploadsPerS, float64(n))
	}
	stopSampler()
	samplerWG.Wait()
	time.Sleep(1500 * time.Millisecond) // closed backends' statistics reach pg_stat_database
	after, err := readDayCounters(ctx, admin, db)
	if err != nil {
		return nil, err
	}
	if cpu != nil {
		ds.DBCPUSeconds = round(cpu.seconds()-cpu0, 2)
		ds.DBCPUPeak = round(peak, 2)
	} else {
		ds.DBCPUSeconds, ds.DBCPUPeak = math.NaN(), math.NaN()
	}
	ds.XactCommit, ds.XactRollback = after.commit-before.commit, after.rollback-before.rollback
	ds.XactGenerator = genXacts.Load() + ownXacts
	ds.WALBytes = after.wal - before.wal
	up := float64(ds.Uploads)
	ds.XactPerUpload = round(float64(ds.XactCommit)/up, 2)
	ds.RailXactPerUp = round(float64(ds.XactCommit-ds.XactGenerator)/up, 2)
	ds.WALPerUpload = round(float64(ds.WALBytes)/up, 0)
	ds.DBCPUmsPerUp = round(ds.DBCPUSeconds*1000/up, 3)
	wall := time.Since(began).Seconds() - 1.5 // less the wait for the statistics
	ds.MargXactPerUp = round((float64(ds.XactCommit-ds.XactGenerator)-ds.IdleXactPerS*wall)/up, 2)
	ds.MargWALPerUp = round((float64(ds.WALBytes)-ds.IdleWALPerS*wall)/up, 0)
	ds.MargCPUmsPerUp = round((ds.DBCPUSeconds-ds.IdleCPUCores*wall)*1000/up, 3)
	if stmts {
		dayStmts, err := statements(ctx, admin, db)
		if err != nil {
			return nil, err
		}
		ds.Statements, ds.Handlers = dayStatementsOf(dayStmts, idleStmts, idleSecs, wall, up)
		var begins, inbox, claims int64
		var sweepMs, pruneMs float64
		for _, st := range ds.Statements {
			q := strings.Join(strings.Fields(st.Query), " ")
			switch {
			case q == "begin" || q == "BEGIN":
				begins += st.Calls
			case st.Handler == "trigger" && (strings.HasPrefix(q, "WITH e AS") || strings.Contains(q, "FROM ops.receive_facts(")):
				inbox += st.Calls
			case st.Handler == "builder" && strings.HasPrefix(q, "WITH c AS"):
				claims += st.Calls
			}
			if st.Handler == "sweeper" || st.Handler == "backfill" {
				sweepMs += st.ExecMs
				if strings.HasPrefix(q, "WITH started AS") {
					pruneMs += st.ExecMs
				}
			}
		}
		ds.ExplicitXactPerUp, ds.InboxXactPerUp = round(float64(begins)/up, 3), round(float64(inbox)/up, 3)
		ds.ClaimsPerUp = round(float64(claims)/up, 3)
		if n := float64(sweeps.Load()); n > 0 {
			ds.SweepMsPerPass, ds.PruneMsPerPass = round(sweepMs/n, 1), round(pruneMs/n, 1)
		}
	}
	ds.ModelCalls = calls.Load()
	ds.Sweeps, ds.RelayRuns = sweeps.Load(), relays.Load()
	ds.ModelPerUpload = round(float64(ds.ModelCalls)/up, 3)

	// What landed, and each upload's latency, off the database.
	if err := conn.QueryRow(ctx, `SELECT count(*) - $1 FROM ops.matter_frames`, framesBefore).Scan(&ds.Builds); err != nil {
		return nil, err
	}
	if err := conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM ops.matter_frame_runs),
            (SELECT count(DISTINCT served_token::text || firm_id::text || matter_id::text) FROM ops.matter_demands d
              WHERE source = 'backfill' AND served_at IS NOT NULL AND NOT EXISTS (
                SELECT 1 FROM ops.matter_demands x WHERE x.firm_id = d.firm_id AND x.matter_id = d.matter_id
                  AND x.served_token = d.served_token AND x.source <> 'backfill'))`).Scan(&ds.Claims, &ds.BuildsBackfill); err != nil {
		return nil, err
	}
	ds.BuildsPerUpload = round(float64(ds.Builds)/up, 3)
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM ops.matter_frame_jobs j JOIN app.matters m USING (firm_id, matter_id)
        WHERE m.status = 'open' AND j.built_by IS DISTINCT FROM `+postgres.SQLIdentityKey("$1::text", "$2::text", "$3::text", "$4::text"),
		bedrock.Identity("model-b").Name, bedrock.Identity("model-b").Version, "model-b", bedrock.Identity("model-b").PromptHash).Scan(&ds.OutdatedAtEnd); err != nil {
		return nil, fmt.Errorf("outdated: %w", err)
	}
	rows, err := conn.Query(ctx, `SELECT f.rank, extract(epoch FROM d.served_at - o.occurred_at) * 1000
        FROM ops.matter_demands d
        CROSS JOIN LATERAL unnest(d.event_ids) AS e(id)
        JOIN ops.domain_event_outbox o ON o.event_id = e.id AND o.event_name = 'document.uploaded'
        JOIN bench_day.firms f ON f.firm_id = d.firm_id
        WHERE d.served_at IS NOT NULL`)
	if err != nil {
		return nil, err
	}
	lat := map[string][]float64{}
	for rows.Next() {
		var rank int
		var v float64
		if err := rows.Scan(&rank, &v); err != nil {
			rows.Close()
			return nil, err
		}
		lat[dayClass(rank)] = append(lat[dayClass(rank)], v)
		lat["all"] = append(lat["all"], v)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, cl := range dayClasses {
		xs := lat[cl]
		l := DayLatency{N: len(xs), P50: round(quantile(xs, 0.5), 1), P99: round(quantile(xs, 0.99), 1)}
		if len(xs) > 0 {
			l.Max = round(slices.Max(xs), 1)
		}
		ds.Latency[cl] = l
	}
	ds.UploadsUnserved = ds.Uploads - len(lat["all"])
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM ops.domain_event_outbox o JOIN app.matters m USING (firm_id, matter_id)
        WHERE o.event_name = 'document.uploaded' AND m.status = 'closed'
          AND NOT EXISTS (SELECT 1 FROM (SELECT unnest(event_ids) AS id FROM ops.matter_demands WHERE served_at IS NOT NULL) h WHERE h.id = o.event_id)`).Scan(&ds.UploadsHeld); err != nil {
		return nil, err
	}
	a := ds.Latency["all"]
	logf("day %g: upload->current p50 %.0f ms p99 %.0f ms max %.0f ms; %.3f builds, %.3f model calls, %.1f transactions, %.0f WAL bytes per upload; db CPU peak %.2f cores; %d not current (%d held by a close); wall %s, drain %s",
		scale, a.P50, a.P99, a.Max, ds.BuildsPerUpload, ds.ModelPerUpload, ds.XactPerUpload, ds.WALPerUpload, ds.DBCPUPeak,
		ds.UploadsUnserved, ds.UploadsHeld, ds.Wall, ds.Drain)
	return ds, nil
}

// seedDay: the firms (their ranks in bench_day.firms), their open
// matters, and yesterday's state: every matter current, with a Brief
// built by model-a.
func seedDay(ctx context.Context, conn *pgx.Conn, w dayWorkload) error {
	if _, err := conn.Exec(ctx, `CREATE SCHEMA bench_day; CREATE TABLE bench_day.firms (firm_id uuid PRIMARY KEY, rank int NOT NULL)`); err != nil {
		return err
	}
	ranks := make([]int, len(w.firmIDs))
	for i := range ranks {
		ranks[i] = i + 1
	}
	if _, err := conn.Exec(ctx, `INSERT INTO bench_day.firms SELECT * FROM unnest($1::uuid[], $2::int[])`, w.firmIDs, ranks); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, `INSERT INTO app.firms (firm_id, name) SELECT firm_id, 'firm ' || rank FROM bench_day.firms`); err != nil {
		return err
	}
	firms := make([]uuid.UUID, len(w.matters))
	ids := make([]uuid.UUID, len(w.matters))
	for i, m := range w.matters {
		firms[i], ids[i] = m.FirmID, m.MatterID
	}
	if _, err := conn.Exec(ctx, `INSERT INTO app.matters (firm_id, matter_id, title)
        SELECT f, m, 'matter ' || m FROM unnest($1::uuid[], $2::uuid[]) AS u(f, m)`, firms, ids); err != nil {
		return err
	}
	old := bedrock.Identity("model-a")
	if _, err := conn.Exec(ctx, `INSERT INTO ops.matter_frame_jobs
            (firm_id, matter_id, requested_generation, claimed_generation, target_generation, built_generation, built_by)
        SELECT firm_id, matter_id, 1, 1, 1, 1, `+postgres.SQLIdentityKey("$1::text", "$2::text", "$3::text", "$4::text")+` FROM app.matters`,
		old.Name, old.Version, old.ModelID, old.PromptHash); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, `INSERT INTO ops.matter_frames (firm_id, matter_id, token, target_generation, fingerprint,
            builder, model_invoked, body, builder_version, model_id, prompt_hash)
        SELECT firm_id, matter_id, 1, 1, 'yesterday', $1, true, '{}'::jsonb, $2, $3, $4 FROM app.matters`,
		old.Name, old.Version, old.ModelID, old.PromptHash); err != nil {
		return err
	}
	_, err := conn.Exec(ctx, `VACUUM (ANALYZE) app.matters, ops.matter_frame_jobs, ops.matter_frames`)
	return err
}

// projectRootDir is the directory holding the product's go.mod (the one
// above bench/), searched upwards from the working directory.
func projectRootDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return ".."
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "template.yaml")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return filepath.Join(wd, "..")
		}
	}
}

// daySummary: one `name: value` line per figure, each listing every scale
// (scale=value), so its growth from the smallest to the largest reads on
// one line.
func daySummary(d *DayResults) []SummaryLine {
	var out []SummaryLine
	add := func(name string, f func(s DayScale) string, note string) {
		var parts []string
		for _, s := range d.Scales {
			parts = append(parts, fmt.Sprintf("%g=%s", s.Scale, f(s)))
		}
		out = append(out, SummaryLine{Name: name, Value: strings.Join(parts, " ") + " (" + note + ")"})
	}
	if len(d.Scales) == 0 {
		return nil
	}
	o := d.Options
	add("day_uploads", func(s DayScale) string {
		return fmt.Sprintf("%d(day %s x%.0f, build %s, peak %.0f/s)", s.Uploads, s.Length, s.Compression, s.BuildTime, s.PeakUploadsPerS)
	}, fmt.Sprintf("uploads at each scale of %d in a day, %d firms (Zipf s=%g), 24 h compressed into the day shown; build %s real, compressed with the day; builders %d, backfill builders %d",
		o.Uploads, o.Firms, o.ZipfS, o.BuildReal, o.Builders, o.Backfillers))
	for _, cl := range dayClasses {
		add("day_upload_to_current_ms_"+cl, func(s DayScale) string {
			l := s.Latency[cl]
			return fmt.Sprintf("%.0f/%.0f/%.0f", l.P50, l.P99, l.Max)
		}, "p50/p99/max, compressed ms, database clock; classes by firm rank: large 1-20, medium 21-200, small 201+")
	}
	add("day_builds_per_upload", func(s DayScale) string { return fmt.Sprintf("%.3f", s.BuildsPerUpload) },
		"frames landed, live and backfill, per upload")
	add("day_backfill_builds", func(s DayScale) string { return fmt.Sprintf("%d", s.BuildsBackfill) },
		"frames that served backfill demand only (the noon model change); outdated open matters left at the end in the JSON")
	add("day_model_calls_per_upload", func(s DayScale) string { return fmt.Sprintf("%.3f", s.ModelPerUpload) },
		"builder calls (a build whose inputs match the last frame calls none)")
	add("day_xact_per_upload", func(s DayScale) string {
		return fmt.Sprintf("%.2f(rail %.2f)", s.XactPerUpload, s.RailXactPerUp)
	}, "pg_stat_database.xact_commit delta of the scale's database per upload; rail = less the generator's one per upload, Regenerate and close")
	add("day_wal_bytes_per_upload", func(s DayScale) string { return fmt.Sprintf("%.0f", s.WALPerUpload) }, "pg_stat_wal.wal_bytes delta per upload (fsync and full_page_writes off on the throwaway server)")
	add("day_db_cpu_peak_cores", func(s DayScale) string { return fmt.Sprintf("%.2f", s.DBCPUPeak) },
		"busiest second of the PostgreSQL processes' CPU (/proc/<pid>/stat of the postmaster, its reaped children and live backends), of 2 shared cores")
	add("day_db_cpu_ms_per_upload", func(s DayScale) string { return fmt.Sprintf("%.2f", s.DBCPUmsPerUp) },
		"PostgreSQL CPU over the scale's run per upload")
	add("day_idle_floor", func(s DayScale) string {
		return fmt.Sprintf("%.0fxact/s,%.0fB/s,%.3fcores", s.IdleXactPerS, s.IdleWALPerS, s.IdleCPUCores)
	}, "the idle rail per second (relay polls, sweeper passes), measured 10 s before each day; paid per real second, not per upload")
	add("day_marginal_per_upload", func(s DayScale) string {
		return fmt.Sprintf("%.2fxact,%.0fB,%.2fms", s.MargXactPerUp, s.MargWALPerUp, s.MargCPUmsPerUp)
	}, "rail transactions, WAL bytes and database CPU per upload less the idle floor over the day's wall time: what sizing scales with")
	add("day_uploads_not_current", func(s DayScale) string {
		return fmt.Sprintf("%d(held %d)", s.UploadsUnserved, s.UploadsHeld)
	}, "uploads not served at the end; held: on a matter closed before its build landed")
	add("day_workload", func(s DayScale) string {
		return fmt.Sprintf("%d/%d/%d/%d/%d", s.Firms, s.Matters, s.Sessions, s.Regenerates, s.Closes)
	}, "firms/matters/sessions/Regenerates/closes")
	add("day_generator_lag_max_ms", func(s DayScale) string { return fmt.Sprintf("%.0f", s.GenLagMaxMs) },
		"how late the host application did its latest event (real ms): above a second or so, the machine, not the rail, set the day's pace")
	add("day_outdated_at_end", func(s DayScale) string { return fmt.Sprintf("%d/%d", s.OutdatedAtEnd, s.Matters) },
		"open matters still built by the morning's model at the end, of all matters (the noon model change's backfill)")
	add("day_invocations", func(s DayScale) string { return fmt.Sprintf("sweeper %d,relay %d", s.Sweeps, s.RelayRuns) },
		"sweeper passes and relay windows over the day and its drain")
	add("day_wall", func(s DayScale) string { return fmt.Sprintf("%s(drain %s)", s.Wall, s.Drain) },
		"the day's real time, and the drain after its last event")
	if len(d.Scales[0].Handlers) > 0 {
		add("day_trigger_batching", func(s DayScale) string {
			return fmt.Sprintf("%.2fexplicit,%.2finbox,%.2fclaims", s.ExplicitXactPerUp, s.InboxXactPerUp, s.ClaimsPerUp)
		}, "per upload: explicit transactions (BEGIN), the trigger's inbox transactions (one ops.receive_facts call per trigger batch; one per matter when a batch falls back to matter by matter) and the builder's claim statements (one per nudge), from pg_stat_statements")
		add("day_live_builds_per_upload", func(s DayScale) string {
			return fmt.Sprintf("%.3f", float64(s.Builds-s.BuildsBackfill)/float64(max(s.Uploads, 1)))
		}, "frames landed less those serving backfill demand only, per upload")
		add("day_sweeper_ms_per_pass", func(s DayScale) string {
			return fmt.Sprintf("%.0f(frame pruning %.0f)", s.SweepMsPerPass, s.PruneMsPerPass)
		}, "the sweeper's and backfill's statements' execution time per pass (pg_stat_statements): a real day pays it 1,440 times whatever its volume")
		var names []string
		for h := range d.Scales[len(d.Scales)-1].Handlers {
			names = append(names, h)
		}
		slices.Sort(names)
		for _, h := range names {
			add("day_statements_per_upload_"+strings.ReplaceAll(h, " ", "_"), func(s DayScale) string {
				x := s.Handlers[h]
				return fmt.Sprintf("%.2f(marginal %.2f),%.2fms", x.CallsPerUpload, x.MargCallsPerUpload, x.ExecMsPerUpload)
			}, "pg_stat_statements: the handler's statement calls per upload (marginal: less the idle rail's rate over the wall time) and their execution time per upload")
		}
	}
	return out
}
