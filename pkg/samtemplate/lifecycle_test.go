package samtemplate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pramaan/brief-rail/internal/testenv/ci"
	"github.com/pramaan/brief-rail/pkg/lambdafn"
)

// schemaMigrationID is the custom resource's logical id. It is not the first one
// (SchemaMigration, served by the unqualified function ARN): a ServiceToken cannot change on
// update, so moving it to the alias took a new logical id.
const schemaMigrationID = "SchemaMigrationLive"

var (
	translateOnce sync.Once
	translatedTpl *Translated
	translateErr  error
)

// translated is template.yaml through the SAM transform (once per test binary); without the
// translator the test skips, except in CI.
func translated(t *testing.T) *Translated {
	t.Helper()
	translateOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		translatedTpl, translateErr = Translate(ctx, filepath.Join(root, "template.yaml"))
	})
	if errors.Is(translateErr, ErrNoTranslator) {
		ci.MissingTool(t, translateErr.Error())
	}
	if translateErr != nil {
		t.Fatal(translateErr)
	}
	return translatedTpl
}

// ref is the logical id a {"Ref": id} names ("" for anything else).
func ref(v any) string {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 1 {
		return ""
	}
	s, _ := m["Ref"].(string)
	return s
}

func number(v any) (int, bool) {
	switch n := v.(type) {
	case float64:
		return int(n), n == float64(int(n))
	case string:
		i, err := strconv.Atoi(n)
		return i, err == nil
	}
	return 0, false
}

// The custom resource CloudFormation invokes gets the no-retry setting, answers within a
// ServiceTimeout of minutes, re-runs when the database it points at changes, and runs before
// the functions that need its schema.
func TestSchemaMigrationResourceInvariants(t *testing.T) {
	tr := translated(t)
	crs := tr.OfType("Custom::SchemaMigration")
	if len(crs) != 1 {
		t.Fatalf("custom resources %v, want one", crs)
	}
	id := crs[0]
	cr := tr.Resources[id].Properties
	fn := tr.Resources["MigrateFunction"].Properties

	// ServiceToken -> the alias; the alias's name is the EventInvokeConfig's qualifier.
	alias := ref(cr["ServiceToken"])
	a, ok := tr.Resources[alias]
	if !ok || a.Type != "AWS::Lambda::Alias" || ref(a.Properties["FunctionName"]) != "MigrateFunction" {
		t.Fatalf("%s: ServiceToken %v is not the migrate function's alias: CloudFormation would invoke $LATEST, "+
			"which keeps Lambda's 2 retries and 6 h event age", id, cr["ServiceToken"])
	}
	qualifier, _ := a.Properties["Name"].(string)
	found := false
	for _, eic := range tr.OfType("AWS::Lambda::EventInvokeConfig") {
		p := tr.Resources[eic].Properties
		if ref(p["FunctionName"]) != "MigrateFunction" {
			continue
		}
		found = true
		if p["Qualifier"] != qualifier {
			t.Errorf("%s: Qualifier %v, but CloudFormation invokes the alias %q", eic, p["Qualifier"], qualifier)
		}
		if n, _ := number(p["MaximumRetryAttempts"]); n != 0 || p["MaximumRetryAttempts"] == nil {
			t.Errorf("%s: MaximumRetryAttempts %v, want 0", eic, p["MaximumRetryAttempts"])
		}
	}
	if !found {
		t.Error("the migrate function has no EventInvokeConfig")
	}
	if id == "SchemaMigration" {
		t.Errorf("the custom resource kept the logical id SchemaMigration: its ServiceToken changed, which CloudFormation refuses on update")
	}

	// ServiceTimeout: a few minutes, above the function's timeout.
	timeout, _ := number(fn["Timeout"])
	st, ok := number(cr["ServiceTimeout"])
	if !ok || st <= timeout || st > 900 {
		t.Errorf("%s: ServiceTimeout %v, want a few minutes above the function's %d s timeout (default: 3,600 s)", id, cr["ServiceTimeout"], timeout)
	}

	// The properties that re-run it.
	if v := ref(cr["CodeVersion"]); tr.Resources[v].Type != "AWS::Lambda::Version" {
		t.Errorf("%s: CodeVersion %v, want a Ref to the function's published version", id, cr["CodeVersion"])
	}
	for _, p := range []string{"DbProxyEndpoint", "DbName", "DbUser", "DbPort"} {
		if ref(cr[p]) != p {
			t.Errorf("%s: property %s is %v, want !Ref %s (changing the database must re-run the migration)", id, p, cr[p], p)
		}
	}
	// Every other function waits for it.
	for _, f := range tr.OfType("AWS::Lambda::Function") {
		if f == "MigrateFunction" {
			continue
		}
		deps := fmt.Sprint(tr.Resources[f].DependsOn)
		if !strings.Contains(deps, id) {
			t.Errorf("%s: DependsOn %s, want %s", f, deps, id)
		}
	}
}

// Subnets without NAT: the reply to CloudFormation is an HTTPS PUT to S3, so creating the
// endpoints means an S3 gateway endpoint on the subnets' route tables, and the route tables
// are required then.
func TestVpcEndpointsIncludeS3ForTheReply(t *testing.T) {
	tr := translated(t)
	var s3 []string
	for _, id := range tr.OfType("AWS::EC2::VPCEndpoint") {
		r := tr.Resources[id]
		if r.Condition != "CreateEndpoints" && !strings.HasPrefix(r.Condition, "CreateBedrock") {
			t.Errorf("%s: condition %q, want CreateEndpoints", id, r.Condition)
		}
		name, _ := json.Marshal(r.Properties["ServiceName"])
		if strings.HasSuffix(strings.Trim(string(name), `"}`), ".s3") {
			s3 = append(s3, id)
			if r.Properties["VpcEndpointType"] != "Gateway" || ref(r.Properties["RouteTableIds"]) != "RouteTableIds" || r.Condition != "CreateEndpoints" {
				t.Errorf("%s: %v, want a Gateway endpoint on !Ref RouteTableIds under CreateEndpoints", id, r.Properties)
			}
		}
	}
	if len(s3) != 1 {
		t.Fatalf("S3 endpoints %v: with CreateVpcEndpoints=true the custom resource's reply has no way out", s3)
	}
	if p := tr.Parameters["RouteTableIds"]; p == nil || p["Type"] != "CommaDelimitedList" {
		t.Errorf("RouteTableIds parameter: %v", p)
	}
	rules, _ := json.Marshal(tr.Rules)
	if !strings.Contains(string(rules), `"RuleCondition":{"Fn::Equals":[{"Ref":"CreateVpcEndpoints"},"true"]}`) ||
		!strings.Contains(string(rules), `{"Fn::Not":[{"Fn::Contains":[{"Ref":"RouteTableIds"},""]}]}`) {
		t.Errorf("no rule requires RouteTableIds when CreateVpcEndpoints=true: %s", rules)
	}
}

// Reserved concurrency fails a deploy in an account whose quota is below 100 + the
// reservations, so it is behind a parameter, off by default, whose description names the quota;
// the mappings' concurrency against that quota is in the README.
func TestConcurrencyReservationsAreOptIn(t *testing.T) {
	tr := translated(t)
	p := tr.Parameters["ReserveConcurrency"]
	if p == nil || p["Default"] != "false" || !strings.Contains(fmt.Sprint(p["Description"]), "L-B99A9384") {
		t.Fatalf("ReserveConcurrency parameter %v: want default false and the quota (L-B99A9384) named", p)
	}
	cond, _ := json.Marshal(tr.Conditions["ReserveOne"])
	if string(cond) != `{"Fn::Equals":[{"Ref":"ReserveConcurrency"},"true"]}` {
		t.Fatalf("ReserveOne condition %s", cond)
	}
	reserved := 0
	for _, id := range tr.OfType("AWS::Lambda::Function") {
		v, ok := tr.Resources[id].Properties["ReservedConcurrentExecutions"]
		if !ok {
			continue
		}
		b, _ := json.Marshal(v)
		if string(b) != `{"Fn::If":["ReserveOne",1,{"Ref":"AWS::NoValue"}]}` {
			t.Errorf("%s: ReservedConcurrentExecutions %s, want !If [ReserveOne, 1, !Ref AWS::NoValue]", id, b)
		}
		reserved++
	}
	if reserved == 0 {
		t.Error("no function reserves concurrency even with ReserveConcurrency=true")
	}
	tpl := load(t)
	total := 0
	for _, m := range tpl.EventSourceMappings() {
		qs, err := tpl.QueueSource(m)
		if err != nil {
			t.Fatal(err)
		}
		total += qs.MaximumConcurrency
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{fmt.Sprintf("%d concurrent executions", total), fmt.Sprintf("at least %d", 100+reserved), "L-B99A9384"} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("README does not say %q (the mappings allow %d at once; %d reservations)", want, total, reserved)
		}
	}
}

// patternRange is the contiguous range of integers a parameter's AllowedPattern accepts.
func patternRange(t *testing.T, tpl *Template, param string) (lo, hi int) {
	t.Helper()
	p := get(get(tpl.root, "Parameters"), param)
	pat := scalar(get(p, "AllowedPattern"))
	re, err := regexp.Compile(pat)
	if pat == "" || err != nil {
		t.Fatalf("%s: AllowedPattern %q: %v", param, pat, err)
	}
	lo, hi = -1, -1
	for n := 0; n <= 200000; n++ {
		if re.MatchString(strconv.Itoa(n)) {
			if lo < 0 {
				lo = n
			} else if hi != n-1 {
				t.Fatalf("%s: AllowedPattern %q accepts %d after a gap at %d", param, pat, n, hi+1)
			}
			hi = n
		}
	}
	if lo < 0 {
		t.Fatalf("%s: AllowedPattern %q accepts no integer", param, pat)
	}
	return lo, hi
}

// Every integer parameter refuses decimals and other non-integers at deploy time (a Number
// parameter accepts MaxAttempts=2.5; every cold start then refuses it).
func TestIntegerParametersRefuseDecimals(t *testing.T) {
	tpl := load(t)
	ints := 0
	for name, p := range pairs(get(tpl.root, "Parameters")) {
		def := scalar(get(p, "Default"))
		typ := scalar(get(p, "Type"))
		if _, err := strconv.Atoi(def); err != nil && typ != "Number" {
			continue
		}
		if get(p, "AllowedValues") != nil { // an exact list
			continue
		}
		ints++
		if typ != "String" {
			t.Errorf("%s: Type %s; a Number parameter accepts decimals (want String with an integer AllowedPattern)", name, typ)
			continue
		}
		re, err := regexp.Compile(scalar(get(p, "AllowedPattern")))
		if err != nil || scalar(get(p, "AllowedPattern")) == "" {
			t.Errorf("%s: no usable AllowedPattern: %v", name, err)
			continue
		}
		if !re.MatchString(def) {
			t.Errorf("%s: the pattern refuses its own default %q", name, def)
		}
		for _, bad := range []string{def + ".5", def + ".0", "2.5", "1e3", "-" + def, " " + def, def + " ", "0x10", ""} {
			if re.MatchString(bad) {
				t.Errorf("%s: AllowedPattern accepts %q", name, bad)
			}
		}
		lo, hi := patternRange(t, tpl, name)
		if cd := scalar(get(p, "ConstraintDescription")); !strings.Contains(cd, fmt.Sprintf("from %d to %d", lo, hi)) {
			t.Errorf("%s: ConstraintDescription %q does not state the range %d to %d the pattern accepts", name, cd, lo, hi)
		}
	}
	if ints < 8 {
		t.Fatalf("found %d integer parameters; the template has more", ints)
	}
}

// Retained queues outlive a failed first create: named, the runbook can find and remove them
// (or the retry reuses them) instead of each attempt orphaning three more.
func TestRetainedQueuesAreNamed(t *testing.T) {
	tpl := load(t)
	retained := 0
	for _, id := range tpl.Queues() {
		r := tpl.resources[id]
		if scalar(get(r, "DeletionPolicy")) != "Retain" {
			continue
		}
		retained++
		v, err := tpl.resolve(get(get(r, "Properties"), "QueueName"))
		name := toString(v)
		if err != nil || !strings.HasPrefix(name, "brief-rail-dev-") {
			t.Errorf("%s is retained but its QueueName is %q (%v): want brief-rail-<Stage>-…", id, name, err)
		}
	}
	if retained == 0 {
		t.Fatal("no retained queue")
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "brief-rail-<Stage>-trigger-dlq") {
		t.Error("README's runbook does not say how to remove the retained DLQs after a failed first create")
	}
}

// The Verify steps invoke functions by name: the stack's Outputs give each one.
func TestOutputsNameTheFunctions(t *testing.T) {
	tr := translated(t)
	for _, fn := range tr.OfType("AWS::Lambda::Function") {
		out := tr.Outputs[fn+"Name"]
		if out == nil || ref(out["Value"]) != fn {
			t.Errorf("Outputs.%sName: %v, want !Ref %s", fn, out, fn)
		}
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range tr.Outputs {
			if !yield(k) {
				return
			}
		}
	})
	if !slices.Contains(names, "DashboardUrl") {
		t.Errorf("outputs %v", names)
	}
}

// dashboardWidgets parses the dashboard body (its ${...} substitutions replaced by
// placeholders) into each metric widget's title and the metric names it charts.
func dashboardWidgets(t *testing.T, tpl *Template) map[string][]string {
	t.Helper()
	body := get(get(tpl.resources["Dashboard"], "Properties"), "DashboardBody")
	src := scalar(deref(body))
	if body != nil && len(body.Content) == 1 { // !Sub "..."
		src = scalar(body.Content[0])
	}
	if src == "" {
		src = body.Value
	}
	// Numbers (${DemandToCurrentP99SloSeconds}) and strings ("${Queue.QueueName}") alike.
	src = regexp.MustCompile(`"\$\{[^}]+\}"`).ReplaceAllString(src, `"X"`)
	src = regexp.MustCompile(`\$\{[^}]+\}`).ReplaceAllString(src, `0`)
	var d struct {
		Widgets []struct {
			Type       string `json:"type"`
			Properties struct {
				Title   string  `json:"title"`
				Metrics [][]any `json:"metrics"`
			} `json:"properties"`
		} `json:"widgets"`
	}
	if err := json.Unmarshal([]byte(src), &d); err != nil {
		t.Fatalf("the dashboard body does not parse: %v", err)
	}
	out := map[string][]string{}
	for _, w := range d.Widgets {
		if w.Type == "text" {
			continue
		}
		var names []string
		for _, m := range w.Properties.Metrics {
			if len(m) > 1 {
				names = append(names, fmt.Sprint(m[1]))
			}
		}
		out[w.Properties.Title] = names
	}
	return out
}

// docs/operations.md's widget table describes the dashboard as deployed: every row names a
// widget of the dashboard by its title, and every BriefRail metric it names is on that widget.
func TestOperationsWidgetsAreOnTheDashboard(t *testing.T) {
	widgets := dashboardWidgets(t, load(t))
	doc, err := os.ReadFile(filepath.Join(root, "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := string(doc)
	if i := strings.Index(section, "## Widgets"); i >= 0 {
		section = section[i:]
	}
	if i := strings.Index(section, "## Alarms"); i >= 0 {
		section = section[:i]
	}
	rows := 0
	metricRE := regexp.MustCompile("`([A-Z][A-Za-z0-9]+)`")
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || strings.TrimSpace(cells[1]) == "widget" || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") {
			continue
		}
		title := strings.TrimSpace(cells[1])
		rows++
		if title == "Alarms" {
			continue
		}
		metrics, ok := widgets[title]
		if !ok {
			t.Errorf("docs/operations.md describes a widget %q the dashboard does not have", title)
			continue
		}
		for _, m := range metricRE.FindAllStringSubmatch(cells[2], -1) {
			if !slices.Contains(metrics, m[1]) {
				t.Errorf("docs/operations.md: widget %q shows %s, which the dashboard's widget does not chart (%v)", title, m[1], metrics)
			}
		}
	}
	if rows < 10 {
		t.Fatalf("read %d widget rows from docs/operations.md", rows)
	}
}

// fnNames maps the template's functions to the names lambdafn.LoadConfig knows.
var fnNames = map[string]string{"RelayFunction": lambdafn.Relay, "TriggerFunction": lambdafn.Trigger,
	"BuilderFunction": lambdafn.Builder, "SweeperFunction": lambdafn.Sweeper, "MigrateFunction": lambdafn.Migrate}

// events/env.json as `sam local invoke --env-vars` applies it: SAM CLI overrides only the
// variables the template declares for the function, and a Ref to a resource it leaves as the
// logical id. Every function's resulting environment must start (LoadConfig) and name real
// queue URLs, and env.json must set nothing SAM would silently ignore.
func TestSAMLocalEnvironmentFromEventsEnvJSON(t *testing.T) {
	tpl := load(t)
	raw, err := os.ReadFile(filepath.Join(root, "events", "env.json"))
	if err != nil {
		t.Fatal(err)
	}
	var envFile map[string]map[string]string
	if err := json.Unmarshal(raw, &envFile); err != nil {
		t.Fatalf("events/env.json: %v", err)
	}
	for _, fn := range tpl.Functions() {
		env, ignored, err := tpl.SAMLocalEnv(fn, envFile)
		if err != nil {
			t.Fatal(err)
		}
		if len(ignored) > 0 {
			t.Errorf("events/env.json sets %v for %s, which the template does not declare: sam local ignores them", ignored, fn)
		}
		if _, err := lambdafn.LoadConfig(fnNames[fn], func(k string) string { return env[k] }); err != nil {
			t.Errorf("%s under sam local with events/env.json: %v", fn, err)
		}
		for k, v := range env {
			if !strings.HasSuffix(k, "_QUEUE_URL") || v == "" {
				continue
			}
			if u, err := url.Parse(v); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
				t.Errorf("%s: %s=%q under sam local (a Ref becomes the logical id): not a queue URL; set it in events/env.json", fn, k, v)
			}
		}
		if env["DB_IAM_AUTH"] != "false" || env["DB_HOST"] == "" {
			t.Errorf("%s: DB_IAM_AUTH=%q DB_HOST=%q under sam local: want a local server without IAM", fn, env["DB_IAM_AUTH"], env["DB_HOST"])
		}
	}
}

// AWS CLI v2 reads a `file://` payload as base64: the docs' invocations use fileb:// (or say
// --cli-binary-format raw-in-base64-out).
func TestDocsInvokeWithBinaryPayloads(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(root, "README.md"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, "--payload file://") && !strings.Contains(line, "raw-in-base64-out") {
				t.Errorf("%s:%d: --payload file:// fails on AWS CLI v2 (use fileb://): %s", filepath.Base(f), i+1, strings.TrimSpace(line))
			}
		}
	}
}
