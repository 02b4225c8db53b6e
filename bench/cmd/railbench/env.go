package main

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/pramaan/brief-rail/internal/testenv/localpg"
	"github.com/pramaan/brief-rail/pkg/rail"
	railsql "github.com/pramaan/brief-rail/sql"
)

// env is the database server the whole run uses: one server, one bench
// database holding both the rail's schema (app, ops) and River's (public),
// and a separate database for pgbench.
type env struct {
	server    *localpg.Server // nil when DATABASE_URL was given
	adminURL  string
	benchDB   string
	pgbenchDB string
	execMode  pgx.QueryExecMode
	pgVersion string
}

func setupEnv(ctx context.Context, logf func(string, ...any), execMode pgx.QueryExecMode) (*env, error) {
	e := &env{execMode: execMode}
	suffix := fmt.Sprintf("%d_%d", os.Getpid(), time.Now().UnixNano()%1_000_000)
	e.benchDB, e.pgbenchDB = "railbench_"+suffix, "railbench_pgbench_"+suffix
	if u := os.Getenv("DATABASE_URL"); u != "" {
		e.adminURL = u
		logf("using DATABASE_URL (its role needs CREATEDB)")
	} else {
		opt := localpg.Options{Logf: logf}
		if preloadStatements {
			opt.Settings = map[string]string{"shared_preload_libraries": "pg_stat_statements",
				"pg_stat_statements.max": "5000", "pg_stat_statements.track_utility": "on"}
		}
		s, err := localpg.Start(ctx, opt)
		if err != nil {
			return nil, fmt.Errorf("start a throwaway PostgreSQL (or set DATABASE_URL): %w", err)
		}
		e.server = s
		e.adminURL = s.URL("postgres")
	}
	for _, db := range []string{e.benchDB, e.pgbenchDB} {
		if err := e.adminExec(ctx, "CREATE DATABASE "+pgx.Identifier{db}.Sanitize()); err != nil {
			e.close()
			return nil, fmt.Errorf("create database %s: %w", db, err)
		}
	}
	conn, err := pgx.Connect(ctx, e.url(e.benchDB))
	if err != nil {
		e.close()
		return nil, err
	}
	defer conn.Close(ctx)
	if err := conn.QueryRow(ctx, "SELECT version()").Scan(&e.pgVersion); err != nil {
		e.close()
		return nil, err
	}
	if _, err := railsql.Migrate(ctx, conn, nil); err != nil {
		e.close()
		return nil, fmt.Errorf("migrate rail schema: %w", err)
	}
	pool, err := pgxpool.New(ctx, e.url(e.benchDB))
	if err != nil {
		e.close()
		return nil, err
	}
	defer pool.Close()
	mig, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		e.close()
		return nil, fmt.Errorf("river migrator: %w", err)
	}
	if _, err := mig.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		e.close()
		return nil, fmt.Errorf("migrate river schema: %w", err)
	}
	// Bench-only tables: results written by the correctness scenarios.
	if _, err := pool.Exec(ctx, `
CREATE SCHEMA bench;
CREATE TABLE bench.results (
    scenario text NOT NULL, key text NOT NULL, attempt int NOT NULL,
    written_at timestamptz NOT NULL DEFAULT clock_timestamp());
CREATE TABLE bench.demands (key text PRIMARY KEY, requested int NOT NULL DEFAULT 0, built int NOT NULL DEFAULT 0);
CREATE TABLE bench.river_briefs (firm_id uuid NOT NULL, matter_id uuid NOT NULL, body jsonb NOT NULL, documents uuid[] NOT NULL,
    built_at timestamptz NOT NULL DEFAULT clock_timestamp(), PRIMARY KEY (firm_id, matter_id))`); err != nil {
		e.close()
		return nil, fmt.Errorf("bench tables: %w", err)
	}
	return e, nil
}

func (e *env) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if e.server != nil {
		_ = e.server.Stop()
		return
	}
	for _, db := range []string{e.benchDB, e.pgbenchDB} {
		_ = e.adminExec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{db}.Sanitize()+" WITH (FORCE)")
	}
}

func (e *env) adminExec(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, e.adminURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

// url swaps the database name in the admin connection string.
func (e *env) url(db string) string {
	if !strings.HasPrefix(e.adminURL, "postgres://") && !strings.HasPrefix(e.adminURL, "postgresql://") {
		return e.adminURL + " dbname=" + db
	}
	u, err := url.Parse(e.adminURL)
	if err != nil {
		panic(err)
	}
	u.Path = "/" + db
	return u.String()
}

// pool opens a pool on the bench database. Every pool in the run, the rail's
// and River's, gets the same settings. With w set, the pool's connections
// report their wire round trips and statements to it.
func (e *env) pool(ctx context.Context, maxConns int32, w *wireCounter) (*pgxpool.Pool, error) {
	return e.poolMode(ctx, maxConns, w, e.execMode)
}

func (e *env) poolMode(ctx context.Context, maxConns int32, w *wireCounter, mode pgx.QueryExecMode) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(e.url(e.benchDB))
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = maxConns
	cfg.MinConns = 0
	cfg.ConnConfig.DefaultQueryExecMode = mode
	if w != nil {
		d := &net.Dialer{KeepAlive: 5 * time.Minute}
		cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &countingConn{Conn: c, w: w}, nil
		}
		cfg.ConnConfig.Tracer = w
	}
	return pgxpool.NewWithConfig(ctx, cfg)
}

// pgbenchArgs are the connection arguments for the pgbench binary.
func (e *env) pgbenchConn() (host string, port int, user string, env []string, err error) {
	if e.server != nil {
		return "127.0.0.1", e.server.Port(), localpg.Superuser, nil, nil
	}
	cfg, err := pgx.ParseConfig(e.adminURL)
	if err != nil {
		return "", 0, "", nil, err
	}
	if cfg.Password != "" {
		env = append(env, "PGPASSWORD="+cfg.Password)
	}
	return cfg.Host, int(cfg.Port), cfg.User, env, nil
}

// wireCounter counts, across connections, network round trips (a client
// write that follows a server read starts a new one) and statements sent
// through pgx (Query/Exec/QueryRow calls, from its QueryTracer hook).
type wireCounter struct {
	roundTrips atomic.Int64
	statements atomic.Int64
	batches    atomic.Int64
	copies     atomic.Int64
}

func (w *wireCounter) snapshot() (rt, st int64) {
	return w.roundTrips.Load(), w.statements.Load() + w.batches.Load() + w.copies.Load()
}

func (w *wireCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	w.statements.Add(1)
	return ctx
}
func (w *wireCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (w *wireCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	w.batches.Add(1)
	return ctx
}
func (w *wireCounter) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (w *wireCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}
func (w *wireCounter) TraceCopyFromStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceCopyFromStartData) context.Context {
	w.copies.Add(1)
	return ctx
}
func (w *wireCounter) TraceCopyFromEnd(context.Context, *pgx.Conn, pgx.TraceCopyFromEndData) {}

// countingConn counts round trips: a write issued after the previous flight
// got (any of) its answer starts a new round trip. Pipelined writes before
// any read are one round trip.
type countingConn struct {
	net.Conn
	w        *wireCounter
	readSome atomic.Bool // a read happened since the last counted write
	started  atomic.Bool
}

func (c *countingConn) Write(b []byte) (int, error) {
	if !c.started.Swap(true) || c.readSome.Swap(false) {
		c.w.roundTrips.Add(1)
	}
	return c.Conn.Write(b)
}

func (c *countingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.readSome.Store(true)
	}
	return n, err
}

// matters creates n open matters under one new firm, in one statement.
func createMatters(ctx context.Context, pool *pgxpool.Pool, n int, title string) ([]rail.MatterRef, error) {
	firm := uuid.New()
	if _, err := pool.Exec(ctx, `INSERT INTO app.firms (firm_id, name) VALUES ($1, $2)`, firm, title); err != nil {
		return nil, err
	}
	rows, err := pool.Query(ctx, `INSERT INTO app.matters (firm_id, matter_id, title)
        SELECT $1, gen_random_uuid(), $2 || g FROM generate_series(1, $3::int) g
        RETURNING matter_id`, firm, title, n)
	if err != nil {
		return nil, err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return nil, err
	}
	refs := make([]rail.MatterRef, len(ids))
	for i, id := range ids {
		refs[i] = rail.MatterRef{FirmID: firm, MatterID: id}
	}
	return refs, nil
}

func itoa(i int) string { return strconv.Itoa(i) }
