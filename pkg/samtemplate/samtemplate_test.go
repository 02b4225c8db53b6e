package samtemplate

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// The repository root, relative to this package directory.
const root = "../.."

func load(t *testing.T) *Template {
	t.Helper()
	tpl, err := Load(filepath.Join(root, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return tpl
}

// demandFacts are the facts that create Brief demand (docs/ARCHITECTURE.md, Messages).
var demandFacts = []string{"brief.regeneration_requested", "document.removed", "document.uploaded"}

type pattern struct {
	Source     []string `json:"source"`
	DetailType []string `json:"detail-type"`
}

func rulePattern(t *testing.T, tpl *Template) pattern {
	t.Helper()
	raw, err := tpl.RulePattern("TriggerRule")
	if err != nil {
		t.Fatal(err)
	}
	var p pattern
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatalf("pattern %s: %v", raw, err)
	}
	return p
}

func TestTriggerRulePattern(t *testing.T) {
	tpl := load(t)
	p := rulePattern(t, tpl)
	got := slices.Sorted(slices.Values(p.DetailType))
	if !slices.Equal(got, demandFacts) {
		t.Errorf("detail-type = %v, want exactly %v", p.DetailType, demandFacts)
	}
	if slices.Contains(p.DetailType, "frame.built") {
		t.Error("the rail's own frame.built must never create demand")
	}
	def, ok := tpl.Param("EventSource")
	if !ok || def != "pramaan.domain" {
		t.Errorf("EventSource default = %q, %v", def, ok)
	}
	if !slices.Equal(p.Source, []string{def}) {
		t.Errorf("source = %v, want [%s]", p.Source, def)
	}

	over, err := tpl.WithParams(map[string]string{"EventSource": "test.local"})
	if err != nil {
		t.Fatal(err)
	}
	if p := rulePattern(t, over); !slices.Equal(p.Source, []string{"test.local"}) {
		t.Errorf("with override: source = %v", p.Source)
	}
	if p := rulePattern(t, tpl); !slices.Equal(p.Source, []string{def}) {
		t.Error("WithParams changed the original template")
	}
	if _, err := tpl.WithParams(map[string]string{"NoSuchParam": "x"}); err == nil {
		t.Error("WithParams accepted an undeclared parameter")
	}

	targets, err := tpl.RuleTargets("TriggerRule")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(targets, []string{"TriggerQueue"}) {
		t.Errorf("TriggerRule targets = %v, want [TriggerQueue]", targets)
	}
}

// Every SQS-fed function: queue visibility >= 6x the function timeout, a DLQ after >= 5
// receives, and the event source settings the design asks for.
func TestQueuesMatchTheirConsumers(t *testing.T) {
	tpl := load(t)
	want := map[string]QueueSource{
		"TriggerFunction/TriggerQueue": {LogicalID: "TriggerQueueMapping", Function: "TriggerFunction", Queue: "TriggerQueue", BatchSize: 10, MaximumBatchingWindowInSeconds: 2, MaximumConcurrency: 5, Enabled: true},
		"BuilderFunction/BuildQueue":   {LogicalID: "BuildQueueMapping", Function: "BuilderFunction", Queue: "BuildQueue", BatchSize: 10, MaximumConcurrency: 10, Enabled: true},
		// The backfill's own queue and concurrency (BackfillConcurrency's default).
		"BuilderFunction/BackfillQueue": {LogicalID: "BackfillQueueMapping", Function: "BuilderFunction", Queue: "BackfillQueue", BatchSize: 10, MaximumConcurrency: 2, Enabled: true},
	}
	seen := map[string]bool{}
	for _, id := range tpl.Functions() {
		f, err := tpl.Function(id)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range f.QueueSources {
			seen[id+"/"+ev.Queue] = true
			q, err := tpl.Queue(ev.Queue)
			if err != nil {
				t.Fatalf("%s: %v", id, err)
			}
			// A batch's messages stay in flight for the whole invocation and
			// its batching window (the builder's batch of 10 as much as the
			// trigger's).
			if want := 6*f.Timeout + ev.MaximumBatchingWindowInSeconds; q.VisibilityTimeout < want {
				t.Errorf("%s: visibility %d s < 6 x %s timeout %d s + %d s batching window", q.LogicalID, q.VisibilityTimeout, id, f.Timeout, ev.MaximumBatchingWindowInSeconds)
			}
			if q.RedriveMaxReceiveCount < 5 || q.DLQ == "" {
				t.Errorf("%s: redrive maxReceiveCount %d to %q, want >= 5 to a DLQ", q.LogicalID, q.RedriveMaxReceiveCount, q.DLQ)
			} else if _, err := tpl.Queue(q.DLQ); err != nil {
				t.Errorf("%s: DLQ: %v", q.LogicalID, err)
			}
			if !q.SqsManagedSSE {
				t.Errorf("%s: SqsManagedSseEnabled is not true", q.LogicalID)
			}
			if !slices.Contains(ev.FunctionResponseTypes, "ReportBatchItemFailures") {
				t.Errorf("%s: %s lacks ReportBatchItemFailures", id, ev.LogicalID)
			}
			if w, ok := want[id+"/"+ev.Queue]; ok {
				got := ev
				got.FunctionResponseTypes = nil
				if !reflect.DeepEqual(got, w) {
					t.Errorf("%s queue source = %+v, want %+v", id, got, w)
				}
			}
		}
	}
	for id := range want {
		if !seen[id] {
			t.Errorf("%s has no queue source (AWS::Lambda::EventSourceMapping)", id)
		}
	}
	for _, id := range tpl.Queues() {
		q, err := tpl.Queue(id)
		if err != nil {
			t.Fatal(err)
		}
		if !q.SqsManagedSSE {
			t.Errorf("%s: not encrypted", id)
		}
	}
	bq, err := tpl.Queue("BuildQueue")
	if err != nil {
		t.Fatal(err)
	}
	if bq.DelaySeconds != 0 {
		t.Errorf("BuildQueue DelaySeconds = %d; the trigger sets the settle delay per message", bq.DelaySeconds)
	}
	attrs := bq.Attributes("arn:aws:sqs:eu-west-1:123456789012:dlq")
	if attrs["VisibilityTimeout"] != strconv.Itoa(bq.VisibilityTimeout) || !strings.Contains(attrs["RedrivePolicy"], `"maxReceiveCount":5`) {
		t.Errorf("Attributes = %v", attrs)
	}
}

func TestBuilderTimeoutBelowLease(t *testing.T) {
	tpl := load(t)
	f, err := tpl.Function("BuilderFunction")
	if err != nil {
		t.Fatal(err)
	}
	lease, ok := tpl.Param("LeaseSeconds")
	if !ok {
		t.Fatal("LeaseSeconds has no default")
	}
	n, err := strconv.Atoi(lease)
	if err != nil {
		t.Fatal(err)
	}
	if f.Timeout >= n {
		t.Errorf("builder timeout %d s is not below the %d s lease", f.Timeout, n)
	}
	if f.Timeout > 900 {
		t.Errorf("builder timeout %d s exceeds Lambda's 900 s", f.Timeout)
	}
	if got := f.Env["RAIL_LEASE"]; got != lease+"s" {
		t.Errorf("RAIL_LEASE = %q, want %ss", got, lease)
	}
}

// The env contract in docs/ARCHITECTURE.md, as the functions get it in AWS.
func TestFunctionEnvironment(t *testing.T) {
	tpl := load(t)
	wantNames := []string{"DB_HOST", "DB_PORT", "DB_NAME", "DB_USER", "DB_IAM_AUTH", "RAIL_EVENT_BUS",
		"RAIL_EVENT_SOURCE", "RAIL_BUILD_QUEUE_URL", "RAIL_LEASE", "RAIL_SETTLE_DELAY", "RAIL_MAX_ATTEMPTS",
		"RAIL_RELAY_WINDOW", "RAIL_OUTBOX_RETENTION", "RAIL_BRIEF_BUILDER", "RAIL_BEDROCK_MODEL_ID", "RAIL_BEDROCK_MAX_TOKENS"}
	for _, id := range tpl.Functions() {
		f, err := tpl.Function(id)
		if err != nil {
			t.Fatal(err)
		}
		names := f.EnvNames()
		for _, n := range wantNames {
			if !slices.Contains(names, n) {
				t.Errorf("%s: env lacks %s", id, n)
			}
		}
		// The sweeper's own: the backfill's queue, rate and concurrency.
		extra := map[string][]string{"SweeperFunction": {"RAIL_BACKFILL_QUEUE_URL", "RAIL_BACKFILL_RATE", "RAIL_BACKFILL_CONCURRENCY"}}[id]
		for _, n := range extra {
			if !slices.Contains(names, n) {
				t.Errorf("%s: env lacks %s", id, n)
			}
		}
		for _, n := range names {
			if !slices.Contains(wantNames, n) && !slices.Contains(extra, n) {
				t.Errorf("%s: env has %s, which docs/ARCHITECTURE.md does not list", id, n)
			}
		}
		users := map[string]string{"RelayFunction": "brief_relay", "TriggerFunction": "brief_trigger",
			"BuilderFunction": "brief_builder", "SweeperFunction": "brief_sweeper", "MigrateFunction": "brief_rail"}
		checks := map[string]string{"DB_IAM_AUTH": "true", "DB_PORT": "5432", "DB_USER": users[id],
			"RAIL_EVENT_SOURCE": "pramaan.domain", "RAIL_SETTLE_DELAY": "10s", "RAIL_MAX_ATTEMPTS": "5",
			"RAIL_OUTBOX_RETENTION": "168h", "RAIL_BRIEF_BUILDER": "extractive", "RAIL_RELAY_WINDOW": "50s"}
		for k, v := range checks {
			if f.Env[k] != v {
				t.Errorf("%s: %s = %q, want %q", id, k, f.Env[k], v)
			}
		}
		if !slices.Contains(f.EnvUnresolved, "RAIL_BUILD_QUEUE_URL") {
			t.Errorf("%s: RAIL_BUILD_QUEUE_URL should be known only at deploy time", id)
		}
	}
	over, err := tpl.WithParams(map[string]string{"EventBusName": "shared-bus", "BuilderDbUser": "brief_builder", "RelayDbUser": "relay_2"})
	if err != nil {
		t.Fatal(err)
	}
	f, err := over.Function("BuilderFunction")
	if err != nil {
		t.Fatal(err)
	}
	if f.Env["RAIL_EVENT_BUS"] != "shared-bus" || f.Env["DB_USER"] != "brief_builder" {
		t.Errorf("with overrides: RAIL_EVENT_BUS=%q DB_USER=%q", f.Env["RAIL_EVENT_BUS"], f.Env["DB_USER"])
	}
	r, err := over.Function("RelayFunction")
	if err != nil {
		t.Fatal(err)
	}
	if r.Env["DB_USER"] != "relay_2" {
		t.Errorf("relay DB_USER = %q; want its own parameter's value", r.Env["DB_USER"])
	}
}

// Every function is built by `make build-<LogicalId>` from mk/sam.mk into a linux/arm64 bootstrap.
func TestEveryFunctionHasAMakeTarget(t *testing.T) {
	tpl := load(t)
	targets := makeTargets(t, filepath.Join(root, "mk", "sam.mk"))
	ids := tpl.Functions()
	if len(ids) != 5 {
		t.Errorf("functions = %v, want five", ids)
	}
	for _, id := range ids {
		f, err := tpl.Function(id)
		if err != nil {
			t.Fatal(err)
		}
		if f.BuildMethod != "makefile" {
			t.Errorf("%s: BuildMethod = %q, want makefile", id, f.BuildMethod)
		}
		if f.Runtime != "provided.al2023" || f.Handler != "bootstrap" || !slices.Equal(f.Architectures, []string{"arm64"}) || f.CodeURI != "." {
			t.Errorf("%s: runtime %q handler %q arch %v CodeUri %q", id, f.Runtime, f.Handler, f.Architectures, f.CodeURI)
		}
		recipe, ok := targets["build-"+id]
		if !ok {
			t.Errorf("mk/sam.mk has no build-%s target", id)
			continue
		}
		pkg := "./functions/" + strings.ToLower(strings.TrimSuffix(id, "Function"))
		for _, want := range []string{"GOARCH=arm64", "GOOS=linux", "CGO_ENABLED=0", "lambda.norpc", "$(ARTIFACTS_DIR)/bootstrap", pkg} {
			if !strings.Contains(recipe, want) {
				t.Errorf("build-%s recipe %q lacks %q", id, recipe, want)
			}
		}
	}
}

// makeTargets returns each target's recipe in a Makefile fragment, with make variables defined
// by simple assignment expanded once (enough for SAM_GOBUILD and friends).
func makeTargets(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	vars := map[string]string{}
	assign := regexp.MustCompile(`^([A-Za-z_]+)\s*(\?=|:=|=)\s*(.*)$`)
	rule := regexp.MustCompile(`^([A-Za-z0-9_.-]+):`)
	out := map[string]string{}
	cur := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "\t") && cur != "" {
			out[cur] += strings.TrimSpace(line) + "\n"
			continue
		}
		cur = ""
		if m := assign.FindStringSubmatch(line); m != nil {
			vars[m[1]] = m[3]
		} else if m := rule.FindStringSubmatch(line); m != nil && !strings.HasPrefix(m[1], ".") {
			cur = m[1]
			out[cur] = ""
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for k, r := range out {
		for i := 0; i < 3; i++ { // nested variables
			for name, v := range vars {
				r = strings.ReplaceAll(r, "$("+name+")", v)
			}
		}
		out[k] = r
	}
	return out
}

// The schedules carry explicit Input, and events/ holds exactly that payload.
func TestSchedulesAndSampleEvents(t *testing.T) {
	tpl := load(t)
	for id, file := range map[string]string{"RelayFunction": "relay.json", "SweeperFunction": "sweeper.json"} {
		f, err := tpl.Function(id)
		if err != nil {
			t.Fatal(err)
		}
		var sched *EventSpec
		for i := range f.Events {
			if f.Events[i].Type == "ScheduleV2" {
				sched = &f.Events[i]
			}
		}
		if sched == nil {
			t.Errorf("%s has no ScheduleV2 event", id)
			continue
		}
		if sched.ScheduleExpression != "rate(1 minute)" {
			t.Errorf("%s: schedule %q", id, sched.ScheduleExpression)
		}
		var in, sample map[string]any
		if err := json.Unmarshal([]byte(sched.Input), &in); err != nil {
			t.Errorf("%s: Input %q is not JSON: %v", id, sched.Input, err)
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, "events", file))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &sample); err != nil {
			t.Fatalf("events/%s: %v", file, err)
		}
		if !jsonEqual(in, sample) {
			t.Errorf("events/%s = %v, but the schedule delivers %v", file, sample, in)
		}
	}

	// events/trigger.json: an SQS record carrying an EventBridge envelope the trigger rule matches.
	trig := sqsEvent(t, "trigger.json")
	var env struct {
		Source     string         `json:"source"`
		DetailType string         `json:"detail-type"`
		Detail     map[string]any `json:"detail"`
	}
	if err := json.Unmarshal([]byte(trig.Records[0].Body), &env); err != nil {
		t.Fatalf("trigger.json body: %v", err)
	}
	p := rulePattern(t, tpl)
	if !slices.Contains(p.Source, env.Source) || !slices.Contains(p.DetailType, env.DetailType) {
		t.Errorf("trigger.json envelope %s/%s does not match the rule %+v", env.Source, env.DetailType, p)
	}
	// The outbox's bus detail: {"event_id","event_name","firm_id","matter_id","occurred_at","payload":{...}}.
	for _, k := range []string{"event_id", "event_name", "firm_id", "matter_id", "occurred_at"} {
		if v, _ := env.Detail[k].(string); v == "" {
			t.Errorf("trigger.json detail lacks %s", k)
		}
	}
	if env.Detail["event_name"] != env.DetailType {
		t.Errorf("trigger.json detail event_name %v differs from detail-type %s", env.Detail["event_name"], env.DetailType)
	}
	if payload, _ := env.Detail["payload"].(map[string]any); payload["document_id"] == nil {
		t.Error("trigger.json detail payload lacks document_id")
	}
	if !strings.HasPrefix(trig.Records[0].Attributes["AWSTraceHeader"], "Root=1-") {
		t.Error("trigger.json lacks an AWSTraceHeader attribute")
	}

	// events/builder.json: an SQS record carrying a build-queue nudge.
	b := sqsEvent(t, "builder.json")
	var nudge struct {
		V        int    `json:"v"`
		FirmID   string `json:"firm_id"`
		MatterID string `json:"matter_id"`
		Reason   string `json:"reason"`
	}
	if err := json.Unmarshal([]byte(b.Records[0].Body), &nudge); err != nil {
		t.Fatalf("builder.json body: %v", err)
	}
	if nudge.V != 1 || nudge.FirmID != env.Detail["firm_id"] || nudge.MatterID != env.Detail["matter_id"] || nudge.Reason != "demand" {
		t.Errorf("builder.json nudge = %+v", nudge)
	}
}

func sqsEvent(t *testing.T, file string) events.SQSEvent {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "events", file))
	if err != nil {
		t.Fatal(err)
	}
	var ev events.SQSEvent
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatalf("events/%s: %v", file, err)
	}
	if len(ev.Records) == 0 || ev.Records[0].EventSource != "aws:sqs" {
		t.Fatalf("events/%s is not an SQS event", file)
	}
	return ev
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// The reader itself, on small inline templates: long-form intrinsics, !Sub variables,
// conditions, JSON-string redrive policies and errors.
func TestParseForms(t *testing.T) {
	src := `
Parameters:
  Src: {Type: String, Default: a.b}
  Vis: {Type: Number, Default: 120}
  NoDefault: {Type: String}
Conditions:
  IsAB: {"Fn::Equals": [{Ref: Src}, a.b]}
  NotAB: !Not [!Condition IsAB]
Globals:
  Function:
    Timeout: 5
    Environment:
      Variables:
        A: !Sub "${Src}-x"
        B: !Sub ["${V}/${Vis}", {V: !If [NotAB, no, yes]}]
        C: !GetAtt Q.Arn
        D: !Sub "${AWS::Region}"
Resources:
  Q:
    Type: AWS::SQS::Queue
    Properties:
      VisibilityTimeout: {Ref: Vis}
      RedrivePolicy: '{"deadLetterTargetArn":"arn:aws:sqs:r:1:dead","maxReceiveCount":"7"}'
  Q2:
    Type: AWS::SQS::Queue
    Properties:
      RedrivePolicy:
        deadLetterTargetArn: {"Fn::GetAtt": [Q, Arn]}
        maxReceiveCount: 3
  R:
    Type: AWS::Events::Rule
    Properties:
      EventPattern:
        source: [{Ref: Src}]
        detail: {n: [{numeric: [">", 5]}]}
      Targets: [{Id: t, Arn: !GetAtt Q2.Arn}]
  R2:
    Type: AWS::Events::Rule
    Properties:
      EventPattern: {source: [!Ref NoDefault]}
  F:
    Type: AWS::Serverless::Function
    Properties:
      Timeout: 9
      Environment: {Variables: {A: literal}}
      Events:
        Tick: {Type: ScheduleV2, Properties: {ScheduleExpression: rate(5 minutes), Input: '{}'}}
  M:
    Type: AWS::Lambda::EventSourceMapping
    Properties:
      FunctionName: {Ref: F}
      EventSourceArn: {"Fn::GetAtt": [Q, Arn]}
      BatchSize: !Ref Vis
      Enabled: false
`
	tpl, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	q, err := tpl.Queue("Q")
	if err != nil {
		t.Fatal(err)
	}
	if q.VisibilityTimeout != 120 || q.RedriveMaxReceiveCount != 7 || q.DLQ != "dead" || q.DelaySeconds != 0 || q.MessageRetentionPeriod != 345600 {
		t.Errorf("Q = %+v", q)
	}
	q2, err := tpl.Queue("Q2")
	if err != nil {
		t.Fatal(err)
	}
	if q2.DLQ != "Q" || q2.RedriveMaxReceiveCount != 3 || q2.VisibilityTimeout != 30 {
		t.Errorf("Q2 = %+v", q2)
	}
	raw, err := tpl.RulePattern("R")
	if err != nil {
		t.Fatal(err)
	}
	if string(raw) != `{"detail":{"n":[{"numeric":[">",5]}]},"source":["a.b"]}` {
		t.Errorf("pattern = %s", raw)
	}
	if _, err := tpl.RulePattern("R2"); !errors.Is(err, ErrUnresolved) {
		t.Errorf("pattern naming a parameter without default: err = %v", err)
	}
	over, _ := tpl.WithParams(map[string]string{"NoDefault": "z"})
	if raw, err := over.RulePattern("R2"); err != nil || string(raw) != `{"source":["z"]}` {
		t.Errorf("R2 with override = %s, %v", raw, err)
	}
	f, err := tpl.Function("F")
	if err != nil {
		t.Fatal(err)
	}
	if f.Timeout != 9 || f.Env["A"] != "literal" || f.Env["B"] != "yes/120" || f.MemorySize != 128 {
		t.Errorf("F = %+v", f)
	}
	if !slices.Equal(f.EnvUnresolved, []string{"C", "D"}) {
		t.Errorf("EnvUnresolved = %v", f.EnvUnresolved)
	}
	if len(f.Events) != 1 || f.Events[0].Type != "ScheduleV2" || f.Events[0].ScheduleExpression != "rate(5 minutes)" {
		t.Errorf("events = %+v", f.Events)
	}
	// M feeds F from Q (a parameter for its batch size, disabled).
	if want := []QueueSource{{LogicalID: "M", Function: "F", Queue: "Q", BatchSize: 120}}; !reflect.DeepEqual(f.QueueSources, want) {
		t.Errorf("F's queue sources = %+v, want %+v", f.QueueSources, want)
	}
	if !slices.Equal(tpl.EventSourceMappings(), []string{"M"}) {
		t.Errorf("EventSourceMappings = %v", tpl.EventSourceMappings())
	}
	// A mapping from something that is not a queue of the template is an error, and so is
	// reading the function it feeds (the default batch size is Lambda's 10).
	bad, err := Parse([]byte(src + `
  M2:
    Type: AWS::Lambda::EventSourceMapping
    Properties:
      FunctionName: !GetAtt F.Arn
      EventSourceArn: !GetAtt R.Arn
`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bad.QueueSource("M2"); err == nil || !strings.Contains(err.Error(), "not AWS::SQS::Queue") {
		t.Errorf("a mapping from a rule: err = %v", err)
	}
	if _, err := bad.Function("F"); err == nil {
		t.Error("Function read F although one of its mappings is from no queue")
	}
	if _, err := tpl.Queue("R"); err == nil {
		t.Error("Queue accepted a rule")
	}
	if _, err := tpl.Function("Nope"); err == nil {
		t.Error("Function accepted an unknown id")
	}
	if _, ok := tpl.Param("NoDefault"); ok {
		t.Error("Param reported a default that does not exist")
	}
	if _, err := Parse([]byte("- a\n- b\n")); err == nil {
		t.Error("Parse accepted a list")
	}
}
