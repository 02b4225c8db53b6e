package lambdafn_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/google/uuid"

	"github.com/pramaan/brief-rail/internal/testenv/ci"
	"github.com/pramaan/brief-rail/internal/testenv/motoserver"
	"github.com/pramaan/brief-rail/internal/testenv/railtest"
	"github.com/pramaan/brief-rail/internal/testenv/rie"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// The emulator tests get a moto_server of their own. Five bootstraps and
// their emulators calling one moto_server alongside the in-process e2e tests
// made an e2e PutEvents time out under load; apart, each server serves one
// kind of test, with the SDK's ordinary timeouts.
var (
	emuMotoOnce sync.Once
	emuMoto     *motoserver.Server
	emuMotoErr  error
)

// emulatorMoto starts the emulator tests' moto_server on first use.
func emulatorMoto(t *testing.T) *motoserver.Server {
	t.Helper()
	emuMotoOnce.Do(func() { emuMoto, emuMotoErr = motoserver.Start(context.Background(), nil) })
	if emuMotoErr != nil {
		if errors.Is(emuMotoErr, motoserver.ErrNotInstalled) {
			ci.MissingTool(t, fmt.Sprintf(`moto_server is not available (%v); pip install "moto[server]"`, emuMotoErr))
		}
		t.Fatalf("emulator tests' moto_server: %v", emuMotoErr)
	}
	return emuMoto
}

// stopEmulatorMoto stops that server, if it was started (TestMain).
func stopEmulatorMoto() {
	if emuMoto != nil {
		_ = emuMoto.Stop()
	}
}

// newEmulatorStack is newStack on the emulator tests' own moto_server.
func newEmulatorStack(t *testing.T) *stack {
	t.Helper()
	return newStackOn(t, emulatorMoto(t))
}

// The functions' bootstraps, built for the host the way the template builds
// them for Lambda, run under the AWS Lambda Runtime Interface Emulator (the
// runtime `sam local invoke` uses) against the test's PostgreSQL and moto,
// each invoked over the emulator's HTTP API with its events/*.json sample.

// emulatorBin finds aws-lambda-rie; without it the test skips, except in CI
// (CI set), where a missing emulator is a failure.
func emulatorBin(t testing.TB) string {
	t.Helper()
	bin, err := rie.Find()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%v; CI must run the bootstraps under the Lambda runtime (make tools)", err)
		}
		t.Skipf("%v; run make tools (with CI set this is a failure)", err)
	}
	return bin
}

var (
	buildOnce  sync.Once
	bootstraps map[string]string
	buildErr   error
)

// bootstrapFor builds every function's host bootstrap once per test binary
// (the first build compiles the dependencies without cgo: minutes on a cold
// cache) and returns logicalID's.
func bootstrapFor(t testing.TB, logicalID string) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := rie.HostBinDir()
		if err != nil {
			buildErr = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		defer cancel()
		var pkgs []string
		for _, p := range fnPackages {
			pkgs = append(pkgs, p)
		}
		sort.Strings(pkgs)
		bootstraps, buildErr = rie.BuildBootstraps(ctx, dir, pkgs...)
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return bootstraps[fnPackages[logicalID]]
}

// fnPackages maps the template's functions to their main packages.
var fnPackages = map[string]string{
	"RelayFunction":   "./functions/relay",
	"TriggerFunction": "./functions/trigger",
	"BuilderFunction": "./functions/builder",
	"SweeperFunction": "./functions/sweeper",
	"MigrateFunction": "./functions/migrate",
}

// fnRoles are the database roles migration 008 creates, one per function.
var fnRoles = map[string]string{
	"RelayFunction":   "brief_relay",
	"TriggerFunction": "brief_trigger",
	"BuilderFunction": "brief_builder",
	"SweeperFunction": "brief_sweeper",
}

// asRole returns dbURL with its user replaced by role (the test server
// trusts local connections; with an external DATABASE_URL the admin role is
// kept, since the role has no password).
func asRole(t testing.TB, dbURL, role string) string {
	t.Helper()
	if role == "" || os.Getenv("DATABASE_URL") != "" {
		return dbURL
	}
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	return u.String()
}

// startFunction builds logicalID's bootstrap and starts it under the
// emulator with the template's environment for it, aimed at dbURL and moto.
func (s *stack) startFunction(logicalID, dbURL string, extra map[string]string) *rie.Emulator {
	s.t.Helper()
	bin := emulatorBin(s.t)
	spec, err := s.tpl.Function(logicalID)
	if err != nil {
		s.t.Fatal(err)
	}
	boot := bootstrapFor(s.t, logicalID)
	ctx, cancel := context.WithTimeout(s.ctx, time.Minute)
	defer cancel()
	env := map[string]string{}
	for k, v := range spec.Env {
		env[k] = v
	}
	for k, v := range map[string]string{
		"DATABASE_URL": dbURL, "DB_IAM_AUTH": "false",
		"RAIL_EVENT_BUS": s.bus, "RAIL_BUILD_QUEUE_URL": s.buildQ.url,
		"RAIL_RELAY_WINDOW": "1s", "RAIL_SETTLE_DELAY": "0s",
	} {
		env[k] = v
	}
	for k, v := range extra {
		env[k] = v
	}
	var list []string
	for k, v := range env {
		list = append(list, k+"="+v)
	}
	list = append(list, s.moto.Env()...)
	em, err := rie.Start(ctx, bin, rie.Options{Bootstrap: boot, Env: list, FunctionName: logicalID,
		TimeoutSec: spec.Timeout, MemoryMB: spec.MemorySize})
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() {
		em.Stop()
		if s.t.Failed() {
			s.t.Logf("%s under the emulator:\n%s", logicalID, em.Output())
		}
	})
	return em
}

func readEvent(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("../../events/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func invokeOK(t testing.TB, em *rie.Emulator, payload []byte) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := em.Invoke(ctx, payload)
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed() {
		t.Fatalf("invocation failed: status %d: %s", res.Status, res.Body)
	}
	return res.Body
}

// sampleRef is the firm and matter every events/*.json sample names.
func sampleRef(t testing.TB) rail.MatterRef {
	ref, err := rail.ParseMatterRef("11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222")
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

// sampleEventID is the event id of events/trigger.json's fact.
var sampleEventID = uuid.MustParse("44444444-4444-4444-8444-444444444444")

func TestBootstrapsUnderLambdaRuntime(t *testing.T) {
	s := newEmulatorStack(t)
	emulatorBin(t)
	ref := sampleRef(t)
	if _, err := postgres.AddMatter(s.ctx, s.db.Pool, ref, "Sample v. Matter"); err != nil {
		t.Fatal(err)
	}
	tx, err := s.db.Pool.Begin(s.ctx)
	if err != nil {
		t.Fatal(err)
	}
	docID, err := postgres.AddDocument(s.ctx, tx, ref, rail.NewDocument{ID: uuid.MustParse("33333333-3333-4333-8333-333333333333"),
		Name: "complaint.pdf", Pages: []string{"Harlow Logistics sued Penmark Freight on 3 March 2025."}})
	if err != nil {
		t.Fatal(err)
	}
	// The fact events/trigger.json carries (the trigger confirms a demand
	// fact against the outbox row under its event id).
	eventID, err := postgres.RecordFact(s.ctx, tx, rail.Fact{EventID: sampleEventID, FirmID: ref.FirmID, MatterID: uuid.NullUUID{UUID: ref.MatterID, Valid: true},
		Name: rail.FactDocumentUploaded, Payload: map[string]string{"document_id": docID.String()}})
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(s.ctx); err != nil {
		t.Fatal(err)
	}

	// Each function runs as its own least-privilege role (migration 008):
	// a grant missing from the migration fails its step here.
	run := func(logicalID string) *rie.Emulator {
		return s.startFunction(logicalID, asRole(t, s.db.URL, fnRoles[logicalID]), nil)
	}

	// relay: the outbox reaches the bus, and the bus's rule delivers the
	// fact to the trigger queue.
	relay := run("RelayFunction")
	var rr struct{ Published int }
	if err := json.Unmarshal(invokeOK(t, relay, readEvent(t, "relay.json")), &rr); err != nil {
		t.Fatal(err)
	}
	if rr.Published < 1 {
		t.Fatalf("relay published %d facts", rr.Published)
	}
	var unpublished int
	if err := s.db.Pool.QueryRow(s.ctx, `SELECT count(*) FROM ops.outbox_facts WHERE published_at IS NULL`).Scan(&unpublished); err != nil {
		t.Fatal(err)
	}
	if unpublished != 0 {
		t.Fatalf("%d outbox rows still unpublished after the relay invocation", unpublished)
	}
	if !s.receiveUntil(s.trigQ, 30*time.Second, func(body string) bool { return strings.Contains(body, fmt.Sprint(eventID)) }) {
		t.Fatalf("the fact %v never reached the trigger queue", eventID)
	}

	// trigger: events/trigger.json records demand and nudges the build queue.
	trigger := run("TriggerFunction")
	var tr struct {
		BatchItemFailures []any `json:"batchItemFailures"`
	}
	if err := json.Unmarshal(invokeOK(t, trigger, readEvent(t, "trigger.json")), &tr); err != nil {
		t.Fatal(err)
	}
	if len(tr.BatchItemFailures) != 0 {
		t.Fatalf("trigger reported failures: %v", tr.BatchItemFailures)
	}
	if j := s.job(ref); j.RequestedGeneration != 1 {
		t.Fatalf("trigger recorded no demand: %+v", j)
	}
	if !s.receiveUntil(s.buildQ, 30*time.Second, func(body string) bool {
		return strings.Contains(body, ref.MatterID.String()) && strings.Contains(body, `"reason":"demand"`)
	}) {
		t.Fatal("trigger sent no nudge to the build queue")
	}

	// builder: events/builder.json lands a frame.
	builder := run("BuilderFunction")
	invokeOK(t, builder, readEvent(t, "builder.json"))
	if len(s.frames(ref)) != 1 {
		t.Fatal("builder landed no frame")
	}
	if j := s.job(ref); j.BuiltGeneration != 1 {
		t.Fatalf("builder: job row %+v, want built_generation 1", j)
	}

	// sweeper: demand whose nudge was lost (recorded, never nudged, older
	// than the sweep grace) is re-nudged.
	if _, err := postgres.NewLedger(s.db.Pool, rail.Config{}).On(s.db.Pool).Demand(s.ctx, ref, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Pool.Exec(s.ctx, `UPDATE ops.matter_frame_jobs SET last_demanded_at = clock_timestamp() - interval '1 hour',
            demand_since = clock_timestamp() - interval '1 hour', claimed_at = clock_timestamp() - interval '1 hour' WHERE firm_id = $1 AND matter_id = $2`, ref.FirmID, ref.MatterID); err != nil {
		t.Fatal(err)
	}
	sweeper := run("SweeperFunction")
	var sr struct{ Renudged int }
	if err := json.Unmarshal(invokeOK(t, sweeper, readEvent(t, "sweeper.json")), &sr); err != nil {
		t.Fatal(err)
	}
	if sr.Renudged != 1 {
		t.Fatalf("sweeper re-nudged %d matters, want 1", sr.Renudged)
	}
	if !s.receiveUntil(s.buildQ, 30*time.Second, func(body string) bool {
		return strings.Contains(body, ref.MatterID.String()) && strings.Contains(body, `"reason":"sweep"`)
	}) {
		t.Fatal("sweeper's nudge never reached the build queue")
	}

	// The cold start was measured (REPORT line) and the runtime is alive.
	for name, em := range map[string]*rie.Emulator{"relay": relay, "trigger": trigger, "builder": builder, "sweeper": sweeper} {
		if em.WaitInitMS(10*time.Second) <= 0 || len(em.Reports()) == 0 {
			t.Errorf("%s: no REPORT line or no init duration", name)
		}
		if _, err := em.RuntimeMaxRSSKB(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// receiveUntil receives from q until a body satisfies match (deleting what
// it receives) or within passes.
func (s *stack) receiveUntil(q queue, within time.Duration, match func(string) bool) bool {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		out, err := s.sqs.ReceiveMessage(s.ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.url),
			MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
		if err != nil {
			s.t.Fatal(err)
		}
		for _, m := range out.Messages {
			_, _ = s.sqs.DeleteMessage(s.ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(q.url), ReceiptHandle: m.ReceiptHandle})
			if match(aws.ToString(m.Body)) {
				return true
			}
		}
	}
	return false
}

// A function started against a database whose schema is older than its
// build refuses to start: the invocation fails with one clear error and
// the SchemaBehind metric, instead of "relation does not exist" later.
func TestColdStartRefusesAnOlderSchema(t *testing.T) {
	s := newEmulatorStack(t)
	empty := railtest.NewEmptyDB(t)
	trigger := s.startFunction("TriggerFunction", empty.URL, nil)
	ctx, cancel := context.WithTimeout(s.ctx, 2*time.Minute)
	defer cancel()
	res, err := trigger.Invoke(ctx, readEvent(t, "trigger.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Failed() {
		t.Fatalf("the trigger ran against an unmigrated database: %s", res.Body)
	}
	out := waitOutput(t, trigger, "database schema is behind this build")
	if !strings.Contains(out, `"SchemaBehind":1`) {
		t.Fatalf("no SchemaBehind metric in the output:\n%s", out)
	}
	if strings.Contains(out, `relation "`) {
		t.Fatalf("the function reached a missing relation:\n%s", out)
	}
}

// waitOutput polls the emulator's output for want.
func waitOutput(t testing.TB, em *rie.Emulator, want string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		out := em.Output()
		if strings.Contains(out, want) {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("%q never appeared in the function's output:\n%s", want, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// sqsEnvelope is one trigger-queue record carrying an EventBridge envelope
// with source and a fact.
func sqsEnvelope(msgID, source string, eventID uuid.UUID, ref rail.MatterRef, name string) map[string]any {
	detail := map[string]any{"event_id": eventID.String(), "event_name": name, "firm_id": ref.FirmID.String(),
		"matter_id": ref.MatterID.String(), "occurred_at": "2026-01-15T09:29:59.512Z", "payload": map[string]any{}}
	body, _ := json.Marshal(map[string]any{"version": "0", "id": uuid.NewString(), "detail-type": name, "source": source,
		"account": "123456789012", "time": "2026-01-15T09:30:00Z", "region": "eu-west-1", "resources": []any{}, "detail": detail})
	return map[string]any{"messageId": msgID, "receiptHandle": "rh-" + msgID, "body": string(body),
		"attributes": map[string]string{"ApproximateReceiveCount": "1"}, "messageAttributes": map[string]any{},
		"eventSource": "aws:sqs", "eventSourceARN": "arn:aws:sqs:eu-west-1:123456789012:trigger", "awsRegion": "eu-west-1"}
}

// A forged fact silences no one, through the trigger function's own
// bootstrap under the Lambda runtime, as brief_trigger: firm B's fact
// carrying firm A's pending event id, and a fact from a source that is not
// the rail's, fail their messages (retried, then dead-lettered); firm A's
// genuine fact in the same batch records its demand.
func TestTriggerRefusesForgedFactsUnderLambdaRuntime(t *testing.T) {
	s := newEmulatorStack(t)
	emulatorBin(t)
	a := rail.MatterRef{FirmID: uuid.New(), MatterID: uuid.New()}
	b := rail.MatterRef{FirmID: uuid.New(), MatterID: uuid.New()}
	for _, ref := range []rail.MatterRef{a, b} {
		if _, err := postgres.AddMatter(s.ctx, s.db.Pool, ref, "matter"); err != nil {
			t.Fatal(err)
		}
	}
	genuine, err := postgres.RecordFact(s.ctx, s.db.Pool, rail.Fact{FirmID: a.FirmID,
		MatterID: uuid.NullUUID{UUID: a.MatterID, Valid: true}, Name: rail.FactRegenerationRequested})
	if err != nil {
		t.Fatal(err)
	}
	other, err := postgres.RecordFact(s.ctx, s.db.Pool, rail.Fact{FirmID: b.FirmID,
		MatterID: uuid.NullUUID{UUID: b.MatterID, Valid: true}, Name: rail.FactRegenerationRequested})
	if err != nil {
		t.Fatal(err)
	}
	trigger := s.startFunction("TriggerFunction", asRole(t, s.db.URL, fnRoles["TriggerFunction"]), nil)
	ev, _ := json.Marshal(map[string]any{"Records": []any{
		sqsEnvelope("forged", rail.DefaultEventSource, genuine, b, rail.FactRegenerationRequested),
		sqsEnvelope("foreign", "attacker.domain", other, b, rail.FactRegenerationRequested),
		sqsEnvelope("genuine", rail.DefaultEventSource, genuine, a, rail.FactRegenerationRequested),
	}})
	var tr struct {
		BatchItemFailures []struct {
			ItemIdentifier string `json:"itemIdentifier"`
		} `json:"batchItemFailures"`
	}
	if err := json.Unmarshal(invokeOK(t, trigger, ev), &tr); err != nil {
		t.Fatal(err)
	}
	var failed []string
	for _, f := range tr.BatchItemFailures {
		failed = append(failed, f.ItemIdentifier)
	}
	sort.Strings(failed)
	if strings.Join(failed, ",") != "foreign,forged" {
		t.Fatalf("batch item failures %v, want the forged and the foreign messages", failed)
	}
	if j := s.job(a); j.RequestedGeneration != 1 {
		t.Fatalf("firm A's genuine fact: job %+v, want requested 1", j)
	}
	var bJobs int
	if err := s.db.Pool.QueryRow(s.ctx, `SELECT count(*) FROM ops.matter_frame_jobs WHERE matter_id = $1`, b.MatterID).Scan(&bJobs); err != nil {
		t.Fatal(err)
	}
	if bJobs != 0 {
		t.Fatal("a refused fact recorded demand on firm B's matter")
	}
	// The refusal is counted (its EMF line may still be on its way from the
	// emulator's pipe when the reply is back).
	waitOutput(t, trigger, "FactsRefused")
}
