package lambdafn_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pramaan/brief-rail/internal/testenv/railtest"
	"github.com/pramaan/brief-rail/pkg/lambdafn"
	railsql "github.com/pramaan/brief-rail/sql"
)

// cfnReplies is a stand-in for CloudFormation's pre-signed ResponseURL: it
// records the bodies PUT to it.
type cfnReplies struct {
	mu     sync.Mutex
	bodies []map[string]any
}

func (c *cfnReplies) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	m["_method"] = r.Method
	c.mu.Lock()
	c.bodies = append(c.bodies, m)
	c.mu.Unlock()
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

func cfnEvent(t *testing.T, requestType, responseURL string) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{
		"RequestType": requestType, "ResponseURL": responseURL,
		"StackId":            "arn:aws:cloudformation:us-east-1:123456789012:stack/brief-rail/00000000-0000-4000-8000-000000000000",
		"RequestId":          "req-" + requestType,
		"ResourceType":       "Custom::SchemaMigration",
		"LogicalResourceId":  "SchemaMigration",
		"PhysicalResourceId": lambdafn.SchemaResourceID,
		"ResourceProperties": map[string]any{"ServiceToken": "arn:aws:lambda:us-east-1:123456789012:function:migrate"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func schemaVersion(t *testing.T, db *railtest.DB) int32 {
	t.Helper()
	v, err := lambdafn.SchemaVersion(context.Background(), db.Pool)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// The migrate bootstrap under the Lambda runtime: a plain invocation
// migrates an empty database; the custom resource path migrates on Create,
// is idempotent on Update, leaves the schema on Delete, and reports each
// outcome to the ResponseURL.
func TestMigrateUnderLambdaRuntime(t *testing.T) {
	s := newEmulatorStack(t)
	latest, err := railsql.Latest()
	if err != nil {
		t.Fatal(err)
	}

	// By hand: events/migrate.json.
	empty := railtest.NewEmptyDB(t)
	em := s.startFunction("MigrateFunction", empty.URL, nil)
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
	replies := &cfnReplies{}
	srv := httptest.NewServer(replies)
	defer srv.Close()
	fresh := railtest.NewEmptyDB(t)
	cr := s.startFunction("MigrateFunction", fresh.URL, nil)
	for _, rt := range []string{"Create", "Update", "Delete"} {
		invokeOK(t, cr, cfnEvent(t, rt, srv.URL+"/reply/"+rt))
		r := replies.last(t)
		if r["Status"] != "SUCCESS" || r["PhysicalResourceId"] != lambdafn.SchemaResourceID || r["_method"] != http.MethodPut {
			t.Fatalf("%s: reply %v", rt, r)
		}
		if v := schemaVersion(t, fresh); int(v) != latest {
			t.Fatalf("%s: database at version %d, want %d", rt, v, latest)
		}
	}
	var tables int
	if err := fresh.Pool.QueryRow(s.ctx, `SELECT count(*) FROM pg_tables WHERE schemaname IN ('app', 'ops')`).Scan(&tables); err != nil {
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
	s := newEmulatorStack(t)
	db := railtest.NewEmptyDB(t)
	// Sabotage 003: its table already exists, so its CREATE TABLE fails
	// after 001 and 002 committed.
	if _, err := db.Pool.Exec(s.ctx, `CREATE SCHEMA ops; CREATE TABLE ops.trigger_inbox (x int)`); err != nil {
		t.Fatal(err)
	}
	replies := &cfnReplies{}
	srv := httptest.NewServer(replies)
	defer srv.Close()
	em := s.startFunction("MigrateFunction", db.URL, nil)
	ctx, cancel := context.WithTimeout(s.ctx, 2*time.Minute)
	defer cancel()
	res, err := em.Invoke(ctx, cfnEvent(t, "Create", srv.URL+"/reply"))
	if err != nil {
		t.Fatal(err)
	}
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
	if err := db.Pool.QueryRow(s.ctx, `SELECT count(*) FROM information_schema.columns
        WHERE table_schema = 'ops' AND table_name = 'trigger_inbox'`).Scan(&inboxCols); err != nil {
		t.Fatal(err)
	}
	if inboxCols != 1 {
		t.Fatalf("ops.trigger_inbox has %d columns: 003 was half-applied", inboxCols)
	}
}
