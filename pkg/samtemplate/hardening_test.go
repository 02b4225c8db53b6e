package samtemplate

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/pramaan/brief-rail/pkg/lambdafn"
)

// walk calls fn for every mapping key/value pair under n, with the path.
func walk(n *yaml.Node, path string, fn func(path, key string, v *yaml.Node)) {
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for i, c := range n.Content {
			walk(c, fmt.Sprintf("%s[%d]", path, i), fn)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i].Value, n.Content[i+1]
			fn(path, k, v)
			walk(v, path+"."+k, fn)
		}
	}
}

// No IAM statement in the template grants on every resource.
func TestNoWildcardResource(t *testing.T) {
	tpl := load(t)
	walk(tpl.root, "", func(path, key string, v *yaml.Node) {
		if key != "Resource" && key != "Resources" || path == "" {
			return
		}
		vals := []*yaml.Node{v}
		if v.Kind == yaml.SequenceNode {
			vals = v.Content
		}
		for _, x := range vals {
			if x.Kind == yaml.ScalarNode && strings.TrimSpace(x.Value) == "*" {
				t.Errorf("%s.%s: Resource '*'", path, key)
			}
		}
	})
}

type alarm struct {
	id, namespace, metric, stat, missing, fnRef string
}

func alarms(t *testing.T, tpl *Template) []alarm {
	t.Helper()
	var out []alarm
	for _, id := range tpl.resourcesOfType("AWS::CloudWatch::Alarm") {
		p := get(tpl.resources[id], "Properties")
		a := alarm{id: id, namespace: scalar(get(p, "Namespace")), metric: scalar(get(p, "MetricName")),
			stat: scalar(get(p, "Statistic")), missing: scalar(get(p, "TreatMissingData"))}
		for _, d := range items(get(p, "Dimensions")) {
			if scalar(get(d, "Name")) == "FunctionName" {
				if target, ok := refTarget(get(d, "Value")); ok {
					a.fnRef = target
				}
			}
		}
		out = append(out, a)
	}
	return out
}

// Alarms: every one says what missing data means; the per-minute gauges
// treat silence as breaching; gauges use Maximum; every function has an
// Errors alarm; every alarm has a runbook entry naming a railctl command.
func TestAlarms(t *testing.T) {
	tpl := load(t)
	as := alarms(t, tpl)
	perMinuteGauges := map[string]bool{"OldestUnservedDemandSeconds": true, "OutboxOldestAgeSeconds": true,
		"OutboxParked": true, "MattersQuarantined": true}
	seenGauge := map[string]bool{}
	errorsFor := map[string]bool{}
	for _, a := range as {
		if a.missing == "" {
			t.Errorf("%s: no TreatMissingData", a.id)
		}
		if a.namespace == "BriefRail" && perMinuteGauges[a.metric] {
			seenGauge[a.metric] = true
			if a.missing != "breaching" {
				t.Errorf("%s: TreatMissingData %q; a silent %s is an incident (want breaching)", a.id, a.missing, a.metric)
			}
			if a.stat != "Maximum" {
				t.Errorf("%s: statistic %s on a gauge, want Maximum", a.id, a.stat)
			}
		}
		if a.namespace == "AWS/Lambda" && a.metric == "Errors" {
			errorsFor[a.fnRef] = true
		}
	}
	for g := range perMinuteGauges {
		if !seenGauge[g] {
			t.Errorf("no alarm on the gauge %s", g)
		}
	}
	for _, fn := range tpl.Functions() {
		if !errorsFor[fn] {
			t.Errorf("%s has no Errors alarm", fn)
		}
	}
	ops, err := os.ReadFile(filepath.Join(root, "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	paras := strings.Split(string(ops), "\n\n")
	for _, a := range as {
		found := false
		for _, p := range paras {
			if strings.Contains(p, "(`"+a.id+"`)") {
				found = true
				if !regexp.MustCompile("`railctl [a-z]").MatchString(p) {
					t.Errorf("docs/operations.md: the runbook entry for %s names no railctl command", a.id)
				}
			}
		}
		if !found {
			t.Errorf("docs/operations.md has no runbook entry for %s", a.id)
		}
	}
}

// Scheduled functions are not retried by Lambda on top of the next run and
// never overlap; every function logs to a log group with retention; the
// DLQs survive the stack; the trigger queue's visibility covers its
// consumer's retries.
func TestSchedulesLogsAndRetention(t *testing.T) {
	tpl := load(t)
	for _, id := range tpl.Functions() {
		f, err := tpl.Function(id)
		if err != nil {
			t.Fatal(err)
		}
		p := get(tpl.resources[id], "Properties")
		scheduled := false
		for _, ev := range f.Events {
			scheduled = scheduled || strings.HasPrefix(ev.Type, "Schedule")
		}
		if scheduled || id == "MigrateFunction" {
			eic := get(p, "EventInvokeConfig")
			if scalar(get(eic, "MaximumRetryAttempts")) != "0" {
				t.Errorf("%s: EventInvokeConfig.MaximumRetryAttempts is not 0", id)
			}
			if scalar(get(p, "ReservedConcurrentExecutions")) != "1" {
				t.Errorf("%s: ReservedConcurrentExecutions is not 1 (runs could overlap)", id)
			}
		}
		lg, ok := refTarget(get(get(p, "LoggingConfig"), "LogGroup"))
		if !ok {
			t.Errorf("%s: LoggingConfig.LogGroup is not a !Ref to a log group of the stack", id)
			continue
		}
		r, err := tpl.resource(lg, "AWS::Logs::LogGroup")
		if err != nil {
			t.Errorf("%s: %v", id, err)
			continue
		}
		if get(get(r, "Properties"), "RetentionInDays") == nil {
			t.Errorf("%s: log group %s keeps logs forever", id, lg)
		}
	}
	for _, q := range []string{"TriggerDLQ", "BuildDLQ"} {
		r := tpl.resources[q]
		if scalar(get(r, "DeletionPolicy")) != "Retain" || scalar(get(r, "UpdateReplacePolicy")) != "Retain" {
			t.Errorf("%s: DeletionPolicy/UpdateReplacePolicy not Retain", q)
		}
	}
	trig, err := tpl.Function("TriggerFunction")
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range trig.SQSEvents() {
		q, err := tpl.Queue(ev.Queue)
		if err != nil {
			t.Fatal(err)
		}
		if want := 6*trig.Timeout + ev.MaximumBatchingWindowInSeconds; q.VisibilityTimeout < want {
			t.Errorf("%s visibility %d s < 6 x %d s + %d s batching window", ev.Queue, q.VisibilityTimeout, trig.Timeout, ev.MaximumBatchingWindowInSeconds)
		}
	}
	// The schema is migrated (custom resource) before the functions change.
	for _, id := range tpl.Functions() {
		if id == "MigrateFunction" {
			continue
		}
		if d := scalar(get(tpl.resources[id], "DependsOn")); d != "SchemaMigration" {
			t.Errorf("%s: DependsOn %q, want SchemaMigration", id, d)
		}
	}
	if _, err := tpl.resource("SchemaMigration", "Custom::SchemaMigration"); err != nil {
		t.Error(err)
	}
}

// The parameters' bounds are exactly what the functions accept: a value
// the template allows starts the function, one step outside is refused by
// CloudFormation before any cold start sees it.
func TestParameterBoundsMatchTheCode(t *testing.T) {
	tpl := load(t)
	bound := func(param, key string) int {
		n, err := strconv.Atoi(scalar(get(get(get(tpl.root, "Parameters"), param), key)))
		if err != nil {
			t.Fatalf("%s.%s: %v", param, key, err)
		}
		return n
	}
	cases := []struct {
		param, env string
		format     func(int) string
	}{
		{"LeaseSeconds", lambdafn.EnvLease, func(n int) string { return strconv.Itoa(n) + "s" }},
		{"MaxAttempts", lambdafn.EnvMaxAttempts, strconv.Itoa},
		{"OutboxRetentionHours", lambdafn.EnvOutboxRetention, func(n int) string { return strconv.Itoa(n) + "h" }},
		{"SettleDelaySeconds", lambdafn.EnvSettleDelay, func(n int) string { return strconv.Itoa(n) + "s" }},
	}
	accepts := func(env, v string) bool {
		_, err := lambdafn.LoadConfig(lambdafn.Sweeper, func(k string) string {
			switch k {
			case env:
				return v
			case lambdafn.EnvBuildQueueURL:
				return "https://sqs.example/q"
			}
			return ""
		})
		return err == nil
	}
	for _, c := range cases {
		lo, hi := bound(c.param, "MinValue"), bound(c.param, "MaxValue")
		for _, n := range []int{lo, hi} {
			if !accepts(c.env, c.format(n)) {
				t.Errorf("%s=%d is allowed by the template but %s=%s fails the cold start", c.param, n, c.env, c.format(n))
			}
		}
		if accepts(c.env, c.format(hi+1)) {
			t.Errorf("%s: the code accepts %d, above the template's MaxValue %d (bounds drifted)", c.param, hi+1, hi)
		}
	}
	builder, err := tpl.Function("BuilderFunction")
	if err != nil {
		t.Fatal(err)
	}
	if lo := bound("LeaseSeconds", "MinValue"); lo <= builder.Timeout {
		t.Errorf("LeaseSeconds MinValue %d does not outlast the builder's %d s timeout", lo, builder.Timeout)
	}
}
