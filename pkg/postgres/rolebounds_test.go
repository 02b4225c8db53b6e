package postgres_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pramaan/brief-rail/internal/testenv/railtest"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
	railsql "github.com/pramaan/brief-rail/sql"
)

// attackDB is a database migrated the way PostgreSQL 13 and 14 ship
// (CREATE on public open to PUBLIC before the first migration), with two
// firms' matters: A's with a privileged document, a claim and a pending
// fact; B's plain.
type attackDB struct {
	db       *railtest.DB
	ctx      context.Context
	a, b     rail.MatterRef
	claim    rail.Claim
	docA     uuid.UUID
	pendingA uuid.UUID
}

func newAttackDB(t *testing.T) *attackDB {
	t.Helper()
	t.Parallel()
	db := railtest.NewDBAsShipped13(t)
	x := &attackDB{db: db, ctx: context.Background(),
		a: rail.MatterRef{FirmID: uuid.New(), MatterID: uuid.New()},
		b: rail.MatterRef{FirmID: uuid.New(), MatterID: uuid.New()}}
	for _, ref := range []rail.MatterRef{x.a, x.b} {
		if _, err := postgres.AddMatter(x.ctx, db.Pool, ref, "matter "+ref.MatterID.String()[:8]); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	if x.docA, err = postgres.AddDocument(x.ctx, db.Pool, x.a, rail.NewDocument{Name: "advice.pdf",
		Pages: []string{"PRIVILEGED AND CONFIDENTIAL: counsel's advice to Harlow"}}); err != nil {
		t.Fatal(err)
	}
	if x.pendingA, err = postgres.RecordFact(x.ctx, db.Pool, rail.Fact{FirmID: x.a.FirmID,
		MatterID: uuid.NullUUID{UUID: x.a.MatterID, Valid: true}, Name: rail.FactRegenerationRequested}); err != nil {
		t.Fatal(err)
	}
	l := postgres.NewLedger(db.Pool, rail.Config{})
	for _, ref := range []rail.MatterRef{x.a, x.b} {
		if _, err := l.Demand(x.ctx, ref, 1); err != nil {
			t.Fatal(err)
		}
	}
	c, ok, err := l.Claim(x.ctx, x.a, "w")
	if err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	x.claim = c
	return x
}

// as connects as role (logged in, so the role's own settings apply).
func (x *attackDB) as(t *testing.T, role string) *pgx.Conn {
	t.Helper()
	var exists bool
	if err := x.db.Pool.QueryRow(x.ctx, `SELECT EXISTS (SELECT FROM pg_roles WHERE rolname = $1)`, role).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if !exists {
		t.Skipf("role %s does not exist (no bootstrap on this server)", role)
	}
	cfg, err := pgx.ParseConfig(x.db.RoleURL(role))
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	c, err := pgx.ConnectConfig(x.ctx, cfg)
	if err != nil {
		t.Fatalf("login as %s: %v", role, err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// refused runs one attack as role and fails the test if it succeeded.
// Each runs in a transaction rolled back afterwards, so the attacks do not
// disturb each other.
func (x *attackDB) refused(t *testing.T, role, what, sql string, args ...any) {
	t.Helper()
	var c *pgx.Conn
	if role == "owner" {
		conn, err := x.db.Pool.Acquire(x.ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Release()
		c = conn.Conn()
	} else {
		c = x.as(t, role)
	}
	tx, err := c.Begin(x.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(x.ctx) }()
	tag, err := tx.Exec(x.ctx, sql, args...)
	if err == nil {
		t.Errorf("%s as %s: not refused (%s)", what, role, tag)
		return
	}
	t.Logf("%s as %s: refused: %v", what, role, err)
}

// The attacks of issue "Each role bounded by the database", each as the
// role that could make it on a database migrated before these bounds; each
// must be refused by the database itself.
func TestEachRoleIsBoundedByTheDatabase(t *testing.T) {
	x := newAttackDB(t)
	a, b := x.a, x.b

	// builder: another firm's privileged text, titles, facts, the token.
	x.refused(t, "brief_builder", "read every firm's document text", `SELECT pages FROM app.documents`)
	x.refused(t, "brief_builder", "read matter titles", `SELECT title FROM app.matters`)
	x.refused(t, "brief_builder", "record a document.removed for another firm",
		`INSERT INTO ops.domain_event_outbox (firm_id, matter_id, event_name) VALUES ($1, $2, 'document.removed')`, b.FirmID, b.MatterID)
	x.refused(t, "brief_builder", "record a regeneration for the claimed matter",
		`INSERT INTO ops.domain_event_outbox (firm_id, matter_id, event_name) VALUES ($1, $2, 'brief.regeneration_requested')`, a.FirmID, a.MatterID)
	x.refused(t, "brief_builder", "set the fencing token back to 0",
		`UPDATE ops.matter_frame_jobs SET claimed_generation = 0 WHERE firm_id = $1 AND matter_id = $2`, a.FirmID, a.MatterID)
	x.refused(t, "brief_builder", "record demand",
		`UPDATE ops.matter_frame_jobs SET requested_generation = requested_generation + 5`)
	x.refused(t, "brief_builder", "record demand through ops.record_demand",
		`SELECT * FROM ops.record_demand($1, $2, 5, 'operator', '{}', '')`, a.FirmID, a.MatterID)
	x.refused(t, "brief_relay", "record demand through ops.record_demand",
		`SELECT * FROM ops.record_demand($1, $2, 5, 'operator', '{}', '')`, b.FirmID, b.MatterID)
	for _, role := range []string{"brief_builder", "brief_relay", "brief_sweeper"} {
		x.refused(t, role, "record facts and their demand through the trigger's batch call",
			`SELECT * FROM ops.receive_facts(ARRAY[$1::text], ARRAY[$2::text], ARRAY[$3::text], ARRAY['document.uploaded'], ARRAY[''])`,
			x.pendingA.String(), a.FirmID.String(), a.MatterID.String())
	}
	for _, role := range []string{"brief_builder", "brief_trigger", "brief_sweeper"} {
		x.refused(t, role, "take the relay lease and mark a pending fact published through ops.claim_facts",
			`SELECT * FROM ops.claim_facts(100, ARRAY[$1::text], $2, 60)`, x.pendingA.String(), uuid.NewString())
		// Since migration 027 the cursor's move is the published mark:
		// moving it past a pending fact would publish it unsent.
		x.refused(t, role, "move the relay's cursor past every pending fact",
			`UPDATE ops.relay_lease SET cursor_xid = pg_catalog.pg_current_xact_id() WHERE lease = 'outbox'`)
		x.refused(t, role, "date facts published with a cursor move of its own",
			`INSERT INTO ops.relay_published (cursor_xid, cursor_at, cursor_id, published_at)
             VALUES (pg_catalog.pg_current_xact_id(), 'infinity', gen_random_uuid(), '2000-01-01')`)
	}
	x.refused(t, "brief_builder", "read a document with a token it does not hold",
		`SELECT * FROM ops.claimed_document($1, $2, $3, $4)`, a.FirmID, a.MatterID, x.claim.Token+1, x.docA)
	x.refused(t, "brief_builder", "read another firm's manifest with its token",
		`SELECT * FROM ops.claimed_document_manifest($1, $2, $3, $4, 10)`, b.FirmID, b.MatterID, x.claim.Token, uuid.Nil)
	x.refused(t, "brief_builder", "read every firm's Brief", `SELECT body FROM ops.matter_frames`)
	x.refused(t, "brief_builder", "read every firm's stored Brief bodies", `SELECT body FROM ops.matter_frame_bodies`)
	x.refused(t, "brief_builder", "read another firm's newest frame with its token",
		`SELECT * FROM ops.claimed_latest_frame($1, $2, $3)`, b.FirmID, b.MatterID, x.claim.Token)
	x.refused(t, "brief_builder", "create public.convert_to for the owner to run",
		`CREATE FUNCTION public.convert_to(text, text) RETURNS bytea LANGUAGE sql AS 'SELECT ''\x00''::bytea'`)

	// relay: rewrite a pending fact.
	x.refused(t, "brief_relay", "rewrite a pending fact's firm and matter",
		`UPDATE ops.domain_event_outbox SET firm_id = $2, matter_id = $3 WHERE event_id = $1`, x.pendingA, b.FirmID, b.MatterID)
	x.refused(t, "brief_relay", "rewrite a pending fact's payload",
		`UPDATE ops.domain_event_outbox SET payload = '{"forged":"1"}' WHERE event_id = $1`, x.pendingA)
	x.refused(t, "brief_relay", "rename a pending fact",
		`UPDATE ops.domain_event_outbox SET event_name = 'document.removed' WHERE event_id = $1`, x.pendingA)
	// relay: the per-row lease it no longer takes, and the lease's fence
	// moved backwards (a token can only rise).
	x.refused(t, "brief_relay", "write the retired per-row lease",
		`UPDATE ops.domain_event_outbox SET relay_claim = gen_random_uuid() WHERE event_id = $1`, x.pendingA)
	x.refused(t, "brief_relay", "lower the relay lease's token",
		`UPDATE ops.relay_lease SET token = token - 1`)
	x.refused(t, "brief_relay", "delete the relay lease", `DELETE FROM ops.relay_lease`)
	x.refused(t, "brief_trigger", "take the relay lease",
		`UPDATE ops.relay_lease SET holder = gen_random_uuid(), lease_until = clock_timestamp() + interval '1 hour'`)

	// trigger: make a matter read current with no frame.
	x.refused(t, "brief_trigger", "set built_generation = requested_generation",
		`UPDATE ops.matter_frame_jobs SET target_generation = requested_generation, built_generation = requested_generation
         WHERE firm_id = $1 AND matter_id = $2`, b.FirmID, b.MatterID)
	x.refused(t, "brief_trigger", "move the token",
		`UPDATE ops.matter_frame_jobs SET claimed_generation = claimed_generation + 1`)

	// sweeper: mark unsent facts published, so they are never relayed.
	x.refused(t, "brief_sweeper", "mark unsent facts published",
		`UPDATE ops.domain_event_outbox SET published_at = clock_timestamp() WHERE published_at IS NULL`)
	x.refused(t, "brief_sweeper", "set built_generation",
		`UPDATE ops.matter_frame_jobs SET built_generation = target_generation`)

	// the owner's own DML: the token and the counters still only go forward.
	x.refused(t, "owner", "set the fencing token back to 0",
		`UPDATE ops.matter_frame_jobs SET claimed_generation = 0 WHERE firm_id = $1 AND matter_id = $2`, a.FirmID, a.MatterID)
	x.refused(t, "owner", "lower requested_generation",
		`UPDATE ops.matter_frame_jobs SET requested_generation = 0, target_generation = 0, built_generation = 0, run_status = 'idle'`)
	// railctl emit's statement (RecordFact): firm B with firm A's matter.
	_, err := postgres.RecordFact(x.ctx, x.db.Pool, rail.Fact{FirmID: b.FirmID,
		MatterID: uuid.NullUUID{UUID: a.MatterID, Valid: true}, Name: rail.FactRegenerationRequested})
	if err == nil {
		t.Errorf("a fact pairing firm B with firm A's matter was recorded")
	}
	for _, q := range []string{
		`INSERT INTO ops.trigger_inbox (event_id, firm_id, matter_id, event_name) VALUES (gen_random_uuid(), $1, $2, 'document.uploaded')`,
		`INSERT INTO ops.matter_demands (firm_id, matter_id, generation, n, source, occurred_at) VALUES ($1, $2, 99, 1, 'operator', clock_timestamp())`,
		`INSERT INTO ops.matter_nudges (firm_id, matter_id, reason) VALUES ($1, $2, 'demand')`,
	} {
		x.refused(t, "owner", "a record pairing firm B with firm A's matter: "+strings.Fields(q)[2], q, b.FirmID, a.MatterID)
	}

	// on-call: no DDL, no roles.
	x.refused(t, "brief_oncall", "create a table", `CREATE TABLE ops.oncall_scratch (a int)`)
	x.refused(t, "brief_oncall", "create a role", `CREATE ROLE oncall_friend LOGIN`)
	x.refused(t, "brief_oncall", "read document text", `SELECT pages FROM app.documents`)
}

// The builder still reads what its claim covers, and nothing once the
// claim is gone: the token is the read capability.
func TestBuilderReadsOnlyUnderItsClaim(t *testing.T) {
	x := newAttackDB(t)
	bp := railtest.Pool(t, x.db.RoleURL("brief_builder"), 2)
	x.as(t, "brief_builder") // skips without the roles
	in, err := postgres.LoadClaimedInputs(x.ctx, bp, x.claim)
	if err != nil {
		t.Fatal(err)
	}
	if bin, _, _, err := postgres.NewLedger(bp, rail.Config{}).LoadBuild(x.ctx, x.claim); err != nil ||
		bin.Title != in.Title || len(bin.Manifest) != len(in.Manifest) {
		t.Fatalf("the builder's one-statement load under its claim: %+v %v; want %+v", bin, err, in)
	}
	var pages []string
	for d, err := range in.Documents(x.ctx) {
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, d.Pages...)
	}
	if len(pages) != 1 || !strings.Contains(pages[0], "PRIVILEGED") || in.Title == "" {
		t.Fatalf("under its claim the builder read %q (title %q), want the matter's one page", pages, in.Title)
	}
	// A newer claim supersedes this one: the same Inputs now read nothing.
	if _, err := x.db.Pool.Exec(x.ctx, `UPDATE ops.matter_frame_jobs SET claimed_at = claimed_at - interval '1 hour'
        WHERE firm_id = $1 AND matter_id = $2`, x.a.FirmID, x.a.MatterID); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := postgres.NewLedger(x.db.Pool, rail.Config{}).Claim(x.ctx, x.a, "w2"); err != nil || !ok {
		t.Fatalf("takeover claim: %v %v", ok, err)
	}
	for _, err := range in.Documents(x.ctx) {
		if !isFenced(err) {
			t.Fatalf("a superseded claim read a document: err %v, want rail.ErrFenced", err)
		}
		break
	}
	if _, err := postgres.LoadClaimedInputs(x.ctx, bp, x.claim); !isFenced(err) {
		t.Fatalf("a superseded claim loaded inputs: %v", err)
	}
	if _, _, err := postgres.NewLedger(bp, rail.Config{}).ClaimedLatestFrame(x.ctx, x.claim); !isFenced(err) {
		t.Fatalf("a superseded claim read the newest frame: %v", err)
	}
	if _, _, _, err := postgres.NewLedger(bp, rail.Config{}).LoadBuild(x.ctx, x.claim); !isFenced(err) {
		t.Fatalf("a superseded claim loaded its build: %v", err)
	}
}

func isFenced(err error) bool {
	return err != nil && strings.Contains(err.Error(), rail.ErrFenced.Error())
}

// The claimed_* functions' fence is the ledger's one (rules.go), word for
// word: a change to SQLHoldsToken that the functions did not follow fails.
func TestClaimedReadsUseTheFence(t *testing.T) {
	b := setup(t, rail.Config{})
	fence := postgres.SQLHoldsToken("j", "p_token")
	for _, fn := range []string{"claimed_matter_title", "claimed_document_manifest", "claimed_document", "claimed_latest_frame", "claimed_builds"} {
		var src string
		if err := b.pool.QueryRow(b.ctx, `SELECT prosrc FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
            WHERE n.nspname = 'ops' AND p.proname = $1`, fn).Scan(&src); err != nil {
			t.Fatalf("%s: %v", fn, err)
		}
		if !strings.Contains(src, fence) {
			t.Errorf("ops.%s does not check the fence %s", fn, fence)
		}
	}
}

// opsFunctionSource is the body of function ops.name.
func opsFunctionSource(t *testing.T, b *bundle, name string) string {
	t.Helper()
	var src string
	if err := b.pool.QueryRow(b.ctx, `SELECT prosrc FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = 'ops' AND p.proname = $1`, name).Scan(&src); err != nil {
		t.Fatal(err)
	}
	return src
}

// ops.commit_frames (migration 024) runs the ledger's commit statement
// (commitSQL) word for word, so the statement the Go code documents, and
// the fence and writes its tests prove, is the one the builder runs: a
// change to commitSQL (or to a rule it is built from, such as
// SQLHoldsToken) that no migration carried to the function fails here.
func TestCommitFunctionRunsTheCommitStatement(t *testing.T) {
	b := setup(t, rail.Config{})
	src := opsFunctionSource(t, b, "commit_frames")
	if !strings.Contains(src, postgres.CommitSQL) {
		t.Errorf("ops.commit_frames does not run commitSQL as pkg/postgres has it: a change to the commit needs a migration that replaces the function")
	}
	if !strings.Contains(src, postgres.SQLHoldsToken("j", "u.tok")) {
		t.Errorf("ops.commit_frames does not check the fence %s", postgres.SQLHoldsToken("j", "u.tok"))
	}
}

// ops.claim_matters (migration 025) runs the ledger's batch claim
// (claimBatchSQL) word for word, as ops.commit_frames runs the commit.
func TestClaimFunctionRunsTheClaimStatement(t *testing.T) {
	b := setup(t, rail.Config{})
	src := opsFunctionSource(t, b, "claim_matters")
	if !strings.Contains(src, postgres.ClaimBatchSQL) {
		t.Errorf("ops.claim_matters does not run claimBatchSQL as pkg/postgres has it: a change to the batch claim needs a migration that replaces the function")
	}
}

// ops.claim_facts (migration 026) runs the relay's claim (relayClaimSQL)
// word for word, as ops.commit_frames runs the commit.
func TestRelayClaimFunctionRunsTheClaimStatement(t *testing.T) {
	b := setup(t, rail.Config{})
	src := opsFunctionSource(t, b, "claim_facts")
	if !strings.Contains(src, postgres.RelayClaimSQL) {
		t.Errorf("ops.claim_facts does not run relayClaimSQL as pkg/postgres has it: a change to the relay's claim needs a migration that replaces the function")
	}
}

// No path to the owner: the rail's roles resolve names in pg_catalog (then
// pg_temp) only, and the commit calls the catalog's convert_to even in a
// session whose search_path puts public first, where a role could have
// planted a better-matching overload.
func TestNoPathToTheOwner(t *testing.T) {
	x := newAttackDB(t)
	for _, role := range []string{"brief_relay", "brief_trigger", "brief_builder", "brief_sweeper", "brief_oncall"} {
		var sp string
		if err := x.as(t, role).QueryRow(x.ctx, `SHOW search_path`).Scan(&sp); err != nil {
			t.Fatal(err)
		}
		if sp != "pg_catalog, pg_temp" {
			t.Errorf("%s logs in with search_path %q, want pg_catalog, pg_temp", role, sp)
		}
	}
	// Planted overloads (as a role could on PostgreSQL 13/14 before the
	// revoke), each a better match than the catalog's for the arguments
	// the ledger's statements pass (a literal for a name parameter, exact
	// types where the catalog's is polymorphic or variadic): each records
	// that it ran.
	if _, err := x.db.Pool.Exec(x.ctx, `
        CREATE TABLE public.planted_ran (fn text);
        GRANT INSERT ON public.planted_ran TO PUBLIC;
        CREATE FUNCTION public.convert_to(text, text) RETURNS bytea LANGUAGE sql AS
            'INSERT INTO public.planted_ran VALUES (''convert_to'') RETURNING ''\x00''::bytea';
        CREATE FUNCTION public.jsonb_build_object(text, text, text, text, text, text) RETURNS jsonb LANGUAGE sql AS
            'INSERT INTO public.planted_ran VALUES (''jsonb_build_object'') RETURNING ''{}''::jsonb';
        CREATE FUNCTION public.power(integer, integer) RETURNS double precision LANGUAGE sql AS
            'INSERT INTO public.planted_ran VALUES (''power'') RETURNING 1::float8';
        CREATE FUNCTION public.planted_agg(bigint[], bigint) RETURNS bigint[] LANGUAGE sql AS
            'INSERT INTO public.planted_ran VALUES (''array_agg'') RETURNING $1 || $2';
        CREATE AGGREGATE public.array_agg(bigint) (sfunc = public.planted_agg, stype = bigint[], initcond = '{}')`); err != nil {
		t.Fatal(err)
	}
	cfg := x.db.Pool.Config().Copy()
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		_, err := c.Exec(ctx, `SET search_path = public, pg_catalog`)
		return err
	}
	owner, err := pgxpool.NewWithConfig(x.ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	l := postgres.NewLedger(owner, rail.Config{})
	if _, err := l.Commit(x.ctx, x.claim, frameOf("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Demand(x.ctx, x.a, 1); err != nil {
		t.Fatal(err)
	}
	c, ok, err := l.Claim(x.ctx, x.a, "w2")
	if err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	if _, err := l.Fail(x.ctx, c, errors.New("boom")); err != nil {
		t.Fatal(err)
	}
	rows, err := x.db.Pool.Query(x.ctx, `SELECT DISTINCT fn FROM public.planted_ran ORDER BY fn`)
	if err != nil {
		t.Fatal(err)
	}
	ran, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if len(ran) != 0 {
		t.Errorf("the owner's claim, commit and failure ran the planted %v", ran)
	}
}

// The statements name the schema of every catalog function a planted
// overload could out-match: one called with a literal for a name parameter
// (convert_to), a polymorphic or variadic one (unnest, array_agg,
// jsonb_build_object, format, lag, count of an expression), or one whose
// candidates all need a cast of the arguments passed (power).
func TestOverloadableCatalogCallsAreQualified(t *testing.T) {
	risky := regexp.MustCompile(`\b(convert_to|convert_from|unnest|array_agg|jsonb_agg|jsonb_build_object|json_build_object|to_jsonb|format|concat|lag|lead|power|string_agg)\(|\bcount\([^*)]`)
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "//") {
				continue
			}
			for _, m := range risky.FindAllStringIndex(line, -1) {
				if m[0] > 0 && (line[m[0]-1] == '.' || strings.HasSuffix(line[:m[0]], "fmt.Sprintf(")) {
					continue
				}
				if strings.HasSuffix(line[:m[0]], "pg_catalog.") {
					continue
				}
				name, _, _ := strings.Cut(line[m[0]:m[1]], "(")
				t.Errorf("%s:%d: unqualified %s (write pg_catalog.%s)", f, i+1, name, name)
			}
		}
	}
}

// The shape a deploy has: the administrator's one-time bootstrap, then the
// migrations applied by a schema owner without CREATEROLE (no role is
// created by a migration), on a PostgreSQL 13/14-shaped database. The
// owner's own sessions resolve names in pg_catalog only; no function role
// may create in public; the rail runs as the roles.
func TestBootstrapThenMigrateAsAnOwnerWithoutCreateRole(t *testing.T) {
	t.Parallel()
	if !railtest.OwnServer() {
		t.Skip("needs the tests' own server (a superuser admin)")
	}
	owner := "owner_" + strings.ReplaceAll(uuid.NewString()[:8], "-", "")
	railtest.AdminExec(t, `CREATE ROLE `+owner+` LOGIN NOCREATEROLE NOCREATEDB`)
	t.Cleanup(func() { railtest.AdminExec(t, `DROP ROLE IF EXISTS `+owner) })
	db := railtest.NewEmptyDBAsShipped13(t)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, db.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, `GRANT CREATE ON DATABASE `+db.Name+` TO `+owner); err != nil {
		t.Fatal(err)
	}
	if err := railsql.Bootstrap(ctx, admin, owner); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { railtest.AdminExec(t, `REVOKE ALL ON DATABASE `+db.Name+` FROM `+owner) })

	oc, err := pgx.Connect(ctx, db.RoleURL(owner))
	if err != nil {
		t.Fatal(err)
	}
	defer oc.Close(ctx)
	var sp string
	if err := oc.QueryRow(ctx, `SHOW search_path`).Scan(&sp); err != nil || sp != "pg_catalog, pg_temp" {
		t.Fatalf("the owner logs in with search_path %q (%v), want pg_catalog, pg_temp", sp, err)
	}
	var roles int
	railRoles := `SELECT count(*) FROM pg_catalog.pg_roles WHERE rolname LIKE 'brief\_%'`
	if err := oc.QueryRow(ctx, railRoles).Scan(&roles); err != nil {
		t.Fatal(err)
	}
	if _, err := railsql.Migrate(ctx, oc, nil); err != nil {
		t.Fatalf("migrate as %s (no CREATEROLE): %v", owner, err)
	}
	var after int
	if err := oc.QueryRow(ctx, railRoles).Scan(&after); err != nil || after != roles {
		t.Fatalf("the migrations created roles: %d -> %d (%v)", roles, after, err)
	}

	x := &attackDB{db: db, ctx: ctx}
	var timeout string
	if err := x.as(t, "brief_builder").QueryRow(ctx, `SHOW statement_timeout`).Scan(&timeout); err != nil || timeout != "30s" {
		t.Errorf("brief_builder's statement_timeout in the rail's database = %q (%v), want 30s from the bootstrap", timeout, err)
	}
	x.refused(t, "brief_builder", "create public.convert_to", `CREATE FUNCTION public.convert_to(text, text) RETURNS bytea LANGUAGE sql AS 'SELECT ''\x00''::bytea'`)
	x.refused(t, "brief_oncall", "create a table in public", `CREATE TABLE public.scratch (a int)`)

	// The rail works as the roles on this database: demand as the trigger,
	// a build as the builder.
	ref := rail.MatterRef{FirmID: uuid.New(), MatterID: uuid.New()}
	if _, err := postgres.AddMatter(ctx, oc, ref, "Owner v. Bootstrap"); err != nil {
		t.Fatal(err)
	}
	if _, err := postgres.AddDocument(ctx, oc, ref, rail.NewDocument{Name: "a.pdf", Pages: []string{"page one"}}); err != nil {
		t.Fatal(err)
	}
	tp := railtest.Pool(t, db.RoleURL("brief_trigger"), 2)
	if _, err := postgres.NewLedger(tp, rail.Config{}).Demand(ctx, ref, 1); err != nil {
		t.Fatalf("demand as brief_trigger: %v", err)
	}
	bp := railtest.Pool(t, db.RoleURL("brief_builder"), 2)
	w := &rail.Worker{Ledger: postgres.NewLedger(bp, rail.Config{}), Builder: rail.DigestBuilder{}, ID: "w", Heartbeat: -1}
	if out, err := w.BuildOnce(ctx, ref); err != nil || !out.Landed {
		t.Fatalf("build as brief_builder: %+v %v", out, err)
	}
	// Unchanged inputs: the builder reads the newest frame through its
	// claim and reuses it.
	if _, err := postgres.NewLedger(tp, rail.Config{}).Demand(ctx, ref, 1); err != nil {
		t.Fatal(err)
	}
	if out, err := w.BuildOnce(ctx, ref); err != nil || !out.Landed || out.ModelInvoked {
		t.Fatalf("rebuild with unchanged inputs as brief_builder: %+v %v (want landed, the previous body reused)", out, err)
	}
}

// Where the host has not made the decision (schema public open to every
// role and not the migrating role's), the migration says so.
func TestMigrationWarnsWhenPublicIsOpenAndNotOurs(t *testing.T) {
	t.Parallel()
	if !railtest.OwnServer() {
		t.Skip("needs the tests' own server (a superuser admin)")
	}
	owner := "owner_" + strings.ReplaceAll(uuid.NewString()[:8], "-", "")
	railtest.AdminExec(t, `CREATE ROLE `+owner+` LOGIN NOCREATEROLE NOCREATEDB`)
	t.Cleanup(func() { railtest.AdminExec(t, `DROP ROLE IF EXISTS `+owner) })
	db := railtest.NewEmptyDBAsShipped13(t)
	ctx := context.Background()
	if _, err := db.Pool.Exec(ctx, `GRANT CREATE ON DATABASE `+db.Name+` TO `+owner); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { railtest.AdminExec(t, `REVOKE ALL ON DATABASE `+db.Name+` FROM `+owner) })
	cfg, err := pgx.ParseConfig(db.RoleURL(owner))
	if err != nil {
		t.Fatal(err)
	}
	var notices []string
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { notices = append(notices, n.Severity+": "+n.Message) }
	oc, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer oc.Close(ctx)
	if _, err := railsql.Migrate(ctx, oc, nil); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(notices, func(n string) bool {
		return strings.HasPrefix(n, "WARNING") && strings.Contains(n, "schema public is open") && strings.Contains(n, "bootstrap.sql")
	}) {
		t.Fatalf("no warning about the open schema public; notices: %q", notices)
	}
}

// The batch read (ops.claimed_builds) answers the builder for its own
// claims and refuses the whole batch, with the fence's BR001, when any
// matter of it is not under the caller's running claim: another firm's
// matter beside its own, or a token left out.
func TestClaimedBuildsRefusesABatchWithOneMatterNotClaimed(t *testing.T) {
	x := newAttackDB(t)
	c := x.as(t, "brief_builder") // skips without the roles
	a, b, tok := x.a, x.b, x.claim.Token
	const q = `SELECT count(*), min(title) FROM ops.claimed_builds($1::text[]::uuid[], $2::text[]::uuid[], $3::int8[], 10)`
	var (
		n     int
		title *string
	)
	if err := c.QueryRow(x.ctx, q, []string{a.FirmID.String()}, []string{a.MatterID.String()}, []int64{tok}).Scan(&n, &title); err != nil ||
		n != 1 || title == nil || *title == "" {
		t.Fatalf("the builder's batch read of its own claim: %d rows, title %v, err %v; want its matter", n, title, err)
	}
	for what, args := range map[string][]any{
		"another firm's matter beside its own claim": {[]string{a.FirmID.String(), b.FirmID.String()},
			[]string{a.MatterID.String(), b.MatterID.String()}, []int64{tok, tok}},
		"another firm's matter with its token left out": {[]string{a.FirmID.String(), b.FirmID.String()},
			[]string{a.MatterID.String(), b.MatterID.String()}, []int64{tok}},
		"its own matter with a token it does not hold": {[]string{a.FirmID.String()},
			[]string{a.MatterID.String()}, []int64{tok + 1}},
	} {
		err := c.QueryRow(x.ctx, q, args...).Scan(&n, &title)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "BR001" {
			t.Errorf("batch read of %s: err %v; want the fence's SQLSTATE BR001", what, err)
		}
	}
}
