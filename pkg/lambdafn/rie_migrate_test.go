package lambdafn_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pramaan/brief-rail/internal/testenv/railtest"
	"github.com/pramaan/brief-rail/internal/testenv/rie"
	"github.com/pramaan/brief-rail/pkg/lambdafn"
	"github.com/pramaan/brief-rail/pkg/samtemplate"
	railsql "github.com/pramaan/brief-rail/sql"
)

// cfnReplies is a stand-in for CloudFormation's pre-signed ResponseURL: it
// records the bodies PUT to it and when each arrived.
type cfnReplies struct {
	mu     sync.Mutex
	bodies []map[string]any
	at     []time.Time
}

func (c *cfnReplies) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	if m == nil {
		m = map[string]any{}
	}
	m["_method"] = r.Method
	m["_path"] = r.URL.Path
	m["_bytes"] = len(b)
	m["_content_type"] = r.Header.Get("Content-Type")
	c.mu.Lock()
	c.bodies = append(c.bodies, m)
	c.at = append(c.at, time.Now())
	c.mu.Unlock()
}

func (c *cfnReplies) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.bodies)
}

func (c *cfnReplies) last(t *testing.T) map[string]any {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.bodies) == 0 {
		t.Fatal("the function sent CloudFormation no reply")
	}
	return c.bodies[len(c.bodies)-1]
}

func (c *cfnReplies) lastAt() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at[len(c.at)-1]
}

// cfnRequest is a custom resource request as CloudFormation sends it for
// the stack's SchemaMigration: codeVersion is the version number at the
// end of the CodeVersion property, oldCodeVersion (Update only, 0 for none)
// the one in OldResourceProperties.
func cfnRequest(t *testing.T, requestType, responseURL string, codeVersion, oldCodeVersion int) []byte {
	t.Helper()
	props := func(v int) map[string]any {
		return map[string]any{
			"ServiceToken":    "arn:aws:lambda:us-east-1:123456789012:function:brief-rail-dev-migrate:live",
			"CodeVersion":     fmt.Sprintf("arn:aws:lambda:us-east-1:123456789012:function:brief-rail-dev-migrate:%d", v),
			"DbProxyEndpoint": "brief-rail.proxy-abcdefghijkl.us-east-1.rds.amazonaws.com", "DbName": "brief", "DbUser": "brief_rail",
		}
	}
	ev := map[string]any{
		"RequestType": requestType, "ResponseURL": responseURL,
		"StackId":            "arn:aws:cloudformation:us-east-1:123456789012:stack/brief-rail/00000000-0000-4000-8000-000000000000",
		"RequestId":          "req-" + requestType,
		"ResourceType":       "Custom::SchemaMigration",
		"LogicalResourceId":  "SchemaMigration",
		"PhysicalResourceId": lambdafn.SchemaResourceID,
		"ResourceProperties": props(codeVersion),
	}
	if oldCodeVersion > 0 {
		ev["OldResourceProperties"] = props(oldCodeVersion)
	}
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func cfnEvent(t *testing.T, requestType, responseURL string) []byte {
	old := 0
	if requestType == "Update" {
		old = 1
	}
	return cfnRequest(t, requestType, responseURL, 1, old)
}

func schemaVersion(t *testing.T, db *railtest.DB) int32 {
	t.Helper()
	v, err := lambdafn.SchemaVersion(context.Background(), db.Pool)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// replyEndpoint is a local reply endpoint the migrate function may PUT to
// (RAIL_RESPONSE_URL_PREFIXES names it).
func replyEndpoint(t *testing.T) (*cfnReplies, string) {
	replies := &cfnReplies{}
	srv := httptest.NewServer(replies)
	t.Cleanup(srv.Close)
	return replies, srv.URL + "/"
}

// startMigrate starts the migrate bootstrap under the emulator with the
// template's environment for it, aimed at dbURL, with the function timeout
// timeoutSec (0: the template's) and RAIL_RESPONSE_URL_PREFIXES prefixes.
func startMigrate(t *testing.T, dbURL string, timeoutSec int, prefixes ...string) *rie.Emulator {
	t.Helper()
	bin := emulatorBin(t)
	tpl, err := samtemplate.Load("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	spec, err := tpl.Function("MigrateFunction")
	if err != nil {
		t.Fatal(err)
	}
	if timeoutSec == 0 {
		timeoutSec = spec.Timeout
	}
	boot := bootstrapFor(t, "MigrateFunction")
	var env []string
	for k, v := range spec.Env {
		env = append(env, k+"="+v)
	}
	env = append(env, "DATABASE_URL="+dbURL, "DB_IAM_AUTH=false", "AWS_REGION=us-east-1",
		lambdafn.EnvResponseURLPrefixes+"="+strings.Join(prefixes, ","))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	em, err := rie.Start(ctx, bin, rie.Options{Bootstrap: boot, Env: env, FunctionName: "MigrateFunction",
		TimeoutSec: timeoutSec, MemoryMB: spec.MemorySize})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		em.Stop()
		if t.Failed() {
			t.Logf("MigrateFunction under the emulator:\n%s", em.Output())
		}
	})
	return em
}

// invokeTimed invokes em and returns the result and how long it took.
func invokeTimed(t *testing.T, em *rie.Emulator, payload []byte) (rie.Result, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	started := time.Now()
	res, err := em.Invoke(ctx, payload)
	if err != nil {
		t.Fatal(err)
	}
	return res, time.Since(started)
}

// The migrate bootstrap under the Lambda runtime: a plain invocation
// migrates an empty database; the custom resource path migrates on Create,
// is idempotent on Update, leaves the schema on Delete, and reports each
// outcome to the ResponseURL.
func TestMigrateUnderLambdaRuntime(t *testing.T) {
	t.Parallel()
	latest, err := railsql.Latest()
	if err != nil {
		t.Fatal(err)
	}

	// By hand: events/migrate.json.
	empty := railtest.NewEmptyDB(t)
	em := startMigrate(t, empty.URL, 0)
	var res lambdafn.MigrateResult
	if err := json.Unmarshal(invokeOK(t, em, readEvent(t, "migrate.json")), &res); err != nil {
		t.Fatal(err)
	}
	if res.From != 0 || int(res.To) != latest || len(res.Applied) != latest {
		t.Fatalf("plain migrate: %+v, want 0 -> %d", res, latest)
	}
	if v := schemaVersion(t, empty); int(v) != latest {
		t.Fatalf("database at version %d after migrate, want %d", v, latest)
	}

	// As the stack's custom resource.
	replies, prefix := replyEndpoint(t)
	fresh := railtest.NewEmptyDB(t)
	cr := startMigrate(t, fresh.URL, 0, prefix)
	for _, rt := range []string{"Create", "Update", "Delete"} {
		invokeOK(t, cr, cfnEvent(t, rt, prefix+"reply/"+rt))
		r := replies.last(t)
		if r["Status"] != "SUCCESS" || r["PhysicalResourceId"] != lambdafn.SchemaResourceID || r["_method"] != http.MethodPut ||
			r["_content_type"] != "" || r["RequestId"] != "req-"+rt || r["LogicalResourceId"] != "SchemaMigration" {
			t.Fatalf("%s: reply %v", rt, r)
		}
		if v := schemaVersion(t, fresh); int(v) != latest {
			t.Fatalf("%s: database at version %d, want %d", rt, v, latest)
		}
	}
	var tables int
	if err := fresh.Pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_tables WHERE schemaname IN ('app', 'ops')`).Scan(&tables); err != nil {
		t.Fatal(err)
	}
	if tables == 0 {
		t.Fatal("Delete dropped the schema")
	}
}

// A migration that fails fails the deploy: the reply is FAILED with the
// migration's name and error in the reason, and the failed migration is
// rolled back whole (the version stays at the last one that committed).
func TestMigrateCustomResourceReportsAFailedMigration(t *testing.T) {
	t.Parallel()
	db := railtest.NewEmptyDB(t)
	ctx := context.Background()
	// Sabotage 003: its table already exists, so its CREATE TABLE fails
	// after 001 and 002 committed.
	if _, err := db.Pool.Exec(ctx, `CREATE SCHEMA ops; CREATE TABLE ops.trigger_inbox (x int)`); err != nil {
		t.Fatal(err)
	}
	replies, prefix := replyEndpoint(t)
	em := startMigrate(t, db.URL, 0, prefix)
	res, _ := invokeTimed(t, em, cfnEvent(t, "Create", prefix+"reply"))
	if res.Failed() { // the invocation succeeds: the failure went to CloudFormation
		t.Fatalf("invocation failed instead of replying FAILED: %s", res.Body)
	}
	r := replies.last(t)
	reason, _ := r["Reason"].(string)
	if r["Status"] != "FAILED" || !strings.Contains(reason, "003_trigger_inbox.sql") || !strings.Contains(reason, "already exists") {
		t.Fatalf("reply %v: want FAILED naming 003_trigger_inbox.sql and its error", r)
	}
	if !strings.Contains(reason, "schema left at version 2") {
		t.Fatalf("reason %q does not say where the schema was left", reason)
	}
	if v := schemaVersion(t, db); v != 2 {
		t.Fatalf("database at version %d, want 2 (003 rolled back whole)", v)
	}
	var inboxCols int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM information_schema.columns
        WHERE table_schema = 'ops' AND table_name = 'trigger_inbox'`).Scan(&inboxCols); err != nil {
		t.Fatal(err)
	}
	if inboxCols != 1 {
		t.Fatalf("ops.trigger_inbox has %d columns: 003 was half-applied", inboxCols)
	}
}

// migrateTimeout is the function timeout the state-machine tests give the
// migrate function: short, so each path's timing against the deadline
// shows in seconds.
const migrateTimeout = 8

// The custom resource's paths under the Lambda runtime, each replied to
// before the invocation's deadline, with its timing: another migration
// holding the lock (FAILED, after the bounded wait), a rollback Update and
// a Delete while it holds it (SUCCESS at once, no lock), a schema ahead of
// the code (SUCCESS at once), and a database that blocks a statement
// (FAILED within the budget).
func TestMigrateCustomResourcePathsReplyBeforeTheDeadline(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	latest, err := railsql.Latest()
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Duration(migrateTimeout) * time.Second
	db := railtest.NewEmptyDB(t)
	replies, prefix := replyEndpoint(t)
	em := startMigrate(t, db.URL, migrateTimeout, prefix)

	type want struct {
		status, path, reason string
		within               time.Duration // the reply arrives within this of the invocation's start
	}
	step := func(name string, payload []byte, w want) map[string]any {
		t.Helper()
		before := replies.count()
		started := time.Now()
		res, took := invokeTimed(t, em, payload)
		if res.Failed() {
			t.Fatalf("%s: invocation failed (%s): %s", name, took, res.Body)
		}
		if replies.count() != before+1 {
			t.Fatalf("%s: %d replies, want exactly one", name, replies.count()-before)
		}
		r := replies.last(t)
		replyAfter := replies.lastAt().Sub(started)
		t.Logf("%-34s %s %-12s reply after %6.0f ms, invocation %6.0f ms (deadline %s)", name, r["Status"],
			w.path, float64(replyAfter.Microseconds())/1000, float64(took.Microseconds())/1000, deadline)
		var out lambdafn.CustomResourceOutcome
		if err := json.Unmarshal(res.Body, &out); err != nil {
			t.Fatalf("%s: %v: %s", name, err, res.Body)
		}
		reason, _ := r["Reason"].(string)
		if r["Status"] != w.status || out.Path != w.path || !strings.Contains(reason, w.reason) {
			t.Fatalf("%s: reply %v (path %q), want %s on path %s with reason containing %q", name, r, out.Path, w.status, w.path, w.reason)
		}
		if replyAfter > w.within || took >= deadline {
			t.Fatalf("%s: reply after %s, invocation %s: want the reply within %s and before the %s deadline", name, replyAfter, took, w.within, deadline)
		}
		return r
	}

	r := step("Create on an empty database", cfnRequest(t, "Create", prefix+"create", 4, 0),
		want{"SUCCESS", "migrated", "", deadline})
	if data, _ := r["Data"].(map[string]any); data["Version"] != float64(latest) {
		t.Fatalf("Create: Data %v, want Version %d", r["Data"], latest)
	}
	step("Update, same code (idempotent)", cfnRequest(t, "Update", prefix+"update", 4, 4),
		want{"SUCCESS", "migrated", "", deadline})

	// Another migration (a second stack, railctl migrate) holds tern's lock.
	holder, err := db.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := holder.Exec(ctx, `SELECT set_config('application_name', 'other-migration', false), pg_advisory_lock(9628173550095224)`); err != nil {
		t.Fatal(err)
	}
	step("Update forward, lock held", cfnRequest(t, "Update", prefix+"locked", 5, 4),
		want{"FAILED", "failed", "another migration holds the migration lock (backend pid", deadline})
	step("Update rollback (5 -> 4), lock held", cfnRequest(t, "Update", prefix+"rollback", 4, 5),
		want{"SUCCESS", "rollback", "rollback from code version 5 to 4", time.Second})
	step("Delete, lock held", cfnRequest(t, "Delete", prefix+"delete", 5, 0),
		want{"SUCCESS", "delete", "left as it is", time.Second})
	// The schema one migration ahead of this code (a newer build migrated it).
	if _, err := db.Pool.Exec(ctx, `UPDATE `+railsql.VersionTable+` SET version = $1`, latest+1); err != nil {
		t.Fatal(err)
	}
	step("Update, schema ahead, lock held", cfnRequest(t, "Update", prefix+"ahead", 6, 5),
		want{"SUCCESS", "schema_ahead", fmt.Sprintf("version %d, ahead of this code's %d", latest+1, latest), time.Second})
	step("Create, schema ahead, lock held", cfnRequest(t, "Create", prefix+"ahead-create", 6, 0),
		want{"SUCCESS", "schema_ahead", "ahead of this code", time.Second})
	holder.Release()
	if _, err := db.Pool.Exec(ctx, `UPDATE `+railsql.VersionTable+` SET version = $1`, latest); err != nil {
		t.Fatal(err)
	}

	// A statement that blocks (a session holds the version table): the
	// budget ends the work, the reply still leaves in time.
	blocker, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = blocker.Rollback(ctx) }()
	if _, err := blocker.Exec(ctx, `LOCK TABLE `+railsql.VersionTable+` IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	step("Update forward, database blocks", cfnRequest(t, "Update", prefix+"blocked", 7, 6),
		want{"FAILED", "failed", "", deadline})
}

// A database that does not answer, and reply URLs that hang, refuse, or are
// not CloudFormation's: each ends before the invocation's deadline.
func TestMigrateCustomResourceUnreachableDatabaseAndReplyFailures(t *testing.T) {
	t.Parallel()
	deadline := time.Duration(migrateTimeout) * time.Second

	// A "database" that accepts connections and never answers.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	deadDB := fmt.Sprintf("postgres://brief_rail@%s/brief?sslmode=disable&connect_timeout=60", silent.Addr())
	replies, prefix := replyEndpoint(t)

	hang := make(chan struct{})
	hanging := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-hang }))
	defer hanging.Close()
	defer close(hang)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refusing := "http://" + closed.Addr().String() + "/"
	_ = closed.Close()

	em := startMigrate(t, deadDB, migrateTimeout, prefix, hanging.URL+"/", refusing)

	started := time.Now()
	res, took := invokeTimed(t, em, cfnRequest(t, "Create", prefix+"create", 1, 0))
	r := replies.last(t)
	t.Logf("Create, database silent: %s after %s (invocation %s)", r["Status"], replies.lastAt().Sub(started), took)
	if res.Failed() || r["Status"] != "FAILED" || !strings.Contains(fmt.Sprint(r["Reason"]), "connect") || took >= deadline {
		t.Fatalf("Create against a silent database: invocation %s (%s), reply %v", took, res.Body, r)
	}
	started = time.Now()
	res, took = invokeTimed(t, em, cfnRequest(t, "Delete", prefix+"delete", 1, 0))
	r = replies.last(t)
	t.Logf("Delete, database silent: %s after %s", r["Status"], replies.lastAt().Sub(started))
	if res.Failed() || r["Status"] != "SUCCESS" || took > time.Second {
		t.Fatalf("Delete against a silent database: invocation %s (%s), reply %v", took, res.Body, r)
	}

	for name, url := range map[string]string{"hangs": hanging.URL + "/reply", "refuses": refusing + "reply"} {
		res, took := invokeTimed(t, em, cfnRequest(t, "Delete", url, 1, 0))
		t.Logf("Delete, reply URL %s: invocation ended after %s: %s", name, took, res.ErrorMessage)
		if !res.Failed() || !strings.Contains(res.ErrorMessage, "not delivered") || took >= deadline {
			t.Fatalf("reply URL that %s: invocation %s: %s %s, want a failure naming the undelivered reply before the %s deadline",
				name, took, res.ErrorType, res.ErrorMessage, deadline)
		}
	}

	// Not CloudFormation's: nothing is sent.
	before := replies.count()
	res, _ = invokeTimed(t, em, cfnRequest(t, "Delete", strings.Replace(prefix, "127.0.0.1", "localhost", 1)+"elsewhere", 1, 0))
	if !res.Failed() || !strings.Contains(res.ErrorMessage, "not a CloudFormation response endpoint") || replies.count() != before {
		t.Fatalf("a reply URL outside the allowed ones: %s %s, %d replies sent", res.ErrorType, res.ErrorMessage, replies.count()-before)
	}
}
