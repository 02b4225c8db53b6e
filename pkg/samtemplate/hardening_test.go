package samtemplate

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
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

// noResourceLevel are the actions AWS authorises only on Resource '*' (the Service Authorization
// Reference lists no resource type for them) that a Lambda function in a VPC with active tracing
// needs. docs/operations.md must give the reason for each one the template uses on '*'.
var noResourceLevel = map[string]bool{
	"ec2:DescribeNetworkInterfaces": true, "ec2:DescribeSubnets": true,
	"xray:PutTraceSegments": true, "xray:PutTelemetryRecords": true,
	"xray:GetSamplingRules": true, "xray:GetSamplingTargets": true, "xray:GetSamplingStatisticSummaries": true,
}

// samPollerEvents are the SAM event types for which SAM attaches an AWS managed policy on '*'
// (AWSLambdaSQSQueueExecutionRole, AWSLambdaKinesisExecutionRole, ...) to a role it generates.
var samPollerEvents = map[string]bool{"SQS": true, "Kinesis": true, "DynamoDB": true, "MQ": true,
	"MSK": true, "SelfManagedKafka": true, "DocumentDB": true}

// documentedWildcards reads the table of docs/operations.md's "IAM: what the roles may do" section:
// action -> reason.
func documentedWildcards(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## IAM: what the roles may do\n")
	if !ok {
		t.Fatal(`docs/operations.md has no "## IAM: what the roles may do" section`)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	row := regexp.MustCompile("(?m)^\\| `([a-z0-9-]+:[A-Za-z0-9]+)` \\| *([^|]*?) *\\|$")
	out := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(sec, -1) {
		out[m[1]] = m[2]
	}
	if len(out) == 0 {
		t.Fatal("docs/operations.md: the IAM section has no table of actions on '*'")
	}
	return out
}

// statement is one IAM policy statement of the template, its Resource values flattened through
// intrinsic functions (both branches of an !If).
type statement struct {
	where     string
	actions   []string
	resources []*yaml.Node // the leaves: scalars and intrinsic calls (!GetAtt, !Sub, ...)
	raw       *yaml.Node
}

// leaves flattens n through sequences and both branches of !If.
func leaves(n *yaml.Node) []*yaml.Node {
	n = deref(n)
	if n == nil {
		return nil
	}
	if fn, arg, ok := intrinsic(n); ok && fn == "Fn::If" && arg.Kind == yaml.SequenceNode && len(arg.Content) == 3 {
		return append(leaves(arg.Content[1]), leaves(arg.Content[2])...)
	}
	if n.Kind == yaml.SequenceNode && n.Tag != "!If" {
		var out []*yaml.Node
		for _, c := range n.Content {
			out = append(out, leaves(c)...)
		}
		return out
	}
	return []*yaml.Node{n}
}

// statements returns the statements of a policy document (through !If around statements).
func statements(doc *yaml.Node, where string) []statement {
	var out []statement
	for i, s := range leaves(get(doc, "Statement")) {
		if fn, _, ok := intrinsic(s); ok && fn == "Ref" { // !Ref AWS::NoValue
			continue
		}
		st := statement{where: fmt.Sprintf("%s.Statement[%d]", where, i), raw: s}
		if sid := scalar(get(s, "Sid")); sid != "" {
			st.where = where + "." + sid
		}
		for _, a := range leaves(get(s, "Action")) {
			st.actions = append(st.actions, a.Value)
		}
		st.resources = leaves(get(s, "Resource"))
		out = append(out, st)
	}
	return out
}

// policyDocs returns every IAM policy document of the template: inline role policies, the
// template's managed policies, stand-alone policies and resource policies.
func policyDocs(tpl *Template) map[string]*yaml.Node {
	docs := map[string]*yaml.Node{}
	for id, r := range tpl.resources {
		p := get(r, "Properties")
		switch scalar(get(r, "Type")) {
		case "AWS::IAM::Role":
			for i, pol := range items(get(p, "Policies")) {
				docs[fmt.Sprintf("%s.Policies[%d]", id, i)] = get(pol, "PolicyDocument")
			}
		case "AWS::IAM::ManagedPolicy", "AWS::IAM::Policy", "AWS::IAM::RolePolicy", "AWS::SQS::QueuePolicy",
			"AWS::SNS::TopicPolicy", "AWS::S3::BucketPolicy":
			docs[id] = get(p, "PolicyDocument")
		case "AWS::Events::EventBusPolicy": // one statement, under Properties
			docs[id] = p
		case "AWS::Serverless::Function":
			for i, pol := range items(get(p, "Policies")) {
				if get(pol, "Statement") != nil {
					docs[fmt.Sprintf("%s.Policies[%d]", id, i)] = pol
				}
			}
		}
	}
	return docs
}

// roleStatements returns what a role of the template may do: its inline policies and the
// template's managed policies attached to it.
func roleStatements(tpl *Template, roleID string) []statement {
	r := tpl.resources[roleID]
	p := get(r, "Properties")
	var out []statement
	for i, pol := range items(get(p, "Policies")) {
		out = append(out, statements(get(pol, "PolicyDocument"), fmt.Sprintf("%s.Policies[%d]", roleID, i))...)
	}
	for _, m := range items(get(p, "ManagedPolicyArns")) {
		if id, ok := refTarget(m); ok && scalar(get(tpl.resources[id], "Type")) == "AWS::IAM::ManagedPolicy" {
			out = append(out, statements(get(get(tpl.resources[id], "Properties"), "PolicyDocument"), id)...)
		}
	}
	return out
}

// iamProblems checks the template's IAM against least privilege: Resource '*' only for the
// documented actions that have no resource-level form, no wildcard actions, no Not* elements, and
// nothing that makes SAM attach an AWS managed policy (all of which grant on '*').
func iamProblems(tpl *Template, documented map[string]string) []string {
	var probs []string
	used := map[string]bool{}
	for where, doc := range policyDocs(tpl) {
		for _, st := range statements(doc, where) {
			for _, k := range []string{"NotAction", "NotResource"} {
				if get(st.raw, k) != nil {
					probs = append(probs, fmt.Sprintf("%s: %s", st.where, k))
				}
			}
			for _, a := range st.actions {
				if strings.Contains(a, "*") {
					probs = append(probs, fmt.Sprintf("%s: wildcard action %q", st.where, a))
				}
			}
			star := false
			for _, r := range st.resources {
				star = star || (r.Kind == yaml.ScalarNode && strings.TrimSpace(r.Value) == "*")
			}
			if !star {
				continue
			}
			for _, a := range st.actions {
				used[a] = true
				if documented[a] == "" || !noResourceLevel[a] {
					probs = append(probs, fmt.Sprintf("%s: %s on Resource '*' (not an action without resource-level permissions documented in docs/operations.md)", st.where, a))
				}
			}
		}
	}
	for a := range documented {
		if !used[a] {
			probs = append(probs, fmt.Sprintf("docs/operations.md lists %s on '*', but no statement uses it", a))
		}
	}
	// SAM: a function without Role gets a generated role with AWSLambdaBasicExecutionRole (and
	// the VPC, X-Ray and poller policies); a poller event adds its managed policy.
	if g := tpl.globalsFn; get(g, "Policies") != nil || get(g, "Role") != nil {
		probs = append(probs, "Globals.Function: Policies/Role belong on each function's own role")
	}
	for _, id := range tpl.Functions() {
		p := get(tpl.resources[id], "Properties")
		role, ok := refTarget(get(p, "Role"))
		if !ok || scalar(get(tpl.resources[role], "Type")) != "AWS::IAM::Role" {
			probs = append(probs, fmt.Sprintf("%s: no Role of the template (SAM would generate one with AWSLambdaBasicExecutionRole, Resource '*')", id))
		}
		if get(p, "Policies") != nil {
			probs = append(probs, fmt.Sprintf("%s: Policies (SAM policies; put the statements on the function's role)", id))
		}
		for name, ev := range pairs(get(p, "Events")) {
			if typ := scalar(get(ev, "Type")); samPollerEvents[typ] {
				probs = append(probs, fmt.Sprintf("%s: event %s of type %s (SAM attaches an AWS managed poller policy on '*'; use an AWS::Lambda::EventSourceMapping)", id, name, typ))
			}
		}
	}
	for _, id := range tpl.resourcesOfType("AWS::IAM::Role") {
		for _, m := range items(get(get(tpl.resources[id], "Properties"), "ManagedPolicyArns")) {
			if target, ok := refTarget(m); !ok || scalar(get(tpl.resources[target], "Type")) != "AWS::IAM::ManagedPolicy" {
				probs = append(probs, fmt.Sprintf("%s: ManagedPolicyArns names a policy outside the template", id))
			}
		}
	}
	var scan func(n *yaml.Node, path string)
	scan = func(n *yaml.Node, path string) {
		switch n.Kind {
		case yaml.ScalarNode:
			if strings.Contains(n.Value, ":iam::aws:policy/") {
				probs = append(probs, fmt.Sprintf("%s: an AWS managed policy (%s)", path, n.Value))
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				scan(n.Content[i+1], path+"."+n.Content[i].Value)
			}
		case yaml.SequenceNode, yaml.DocumentNode:
			for i, c := range n.Content {
				scan(c, fmt.Sprintf("%s[%d]", path, i))
			}
		}
	}
	scan(tpl.root, "")
	slices.Sort(probs)
	return probs
}

// grants reports whether one of the statements allows action on exactly the resource !GetAtt
// id.Arn (and nothing else in that statement).
func grants(sts []statement, action, getAttID string) bool {
	for _, st := range sts {
		if !slices.Contains(st.actions, action) || len(st.resources) != 1 {
			continue
		}
		if fn, arg, ok := intrinsic(st.resources[0]); ok && fn == "Fn::GetAtt" && arg.Value == getAttID+".Arn" {
			return true
		}
	}
	return false
}

// The template's roles are least privilege: '*' only where AWS allows nothing narrower, and
// documented; no AWS managed policy through SAM; each function's role lets it write its own log
// group and consume its own queue only, and run in the VPC with tracing.
func TestIAMLeastPrivilege(t *testing.T) {
	tpl := load(t)
	documented := documentedWildcards(t)
	for a, why := range documented {
		if !noResourceLevel[a] {
			t.Errorf("docs/operations.md lists %s on '*', but it has resource-level permissions (or is not needed)", a)
		}
		if len(why) < 20 {
			t.Errorf("docs/operations.md: %s on '*' has no reason (%q)", a, why)
		}
	}
	for _, p := range iamProblems(tpl, documented) {
		t.Error(p)
	}

	vpc, tracing := get(tpl.globalsFn, "VpcConfig") != nil, scalar(get(tpl.globalsFn, "Tracing")) == "Active"
	for _, id := range tpl.Functions() {
		f, err := tpl.Function(id)
		if err != nil {
			t.Fatal(err)
		}
		p := get(tpl.resources[id], "Properties")
		role, _ := refTarget(get(p, "Role"))
		sts := roleStatements(tpl, role)
		lg, _ := refTarget(get(get(p, "LoggingConfig"), "LogGroup"))
		for _, a := range []string{"logs:CreateLogStream", "logs:PutLogEvents"} {
			if !grants(sts, a, lg) {
				t.Errorf("%s (%s): no %s on its own log group %s", id, role, a, lg)
			}
		}
		own := map[string]bool{}
		for _, qs := range f.QueueSources {
			own[qs.Queue] = true
			for _, a := range []string{"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ChangeMessageVisibility"} {
				if !grants(sts, a, qs.Queue) {
					t.Errorf("%s (%s): no %s on %s, which %s feeds it from", id, role, a, qs.Queue, qs.LogicalID)
				}
			}
		}
		for _, st := range sts {
			for _, a := range st.actions {
				if a != "sqs:ReceiveMessage" && a != "sqs:DeleteMessage" && !strings.HasPrefix(a, "logs:") {
					continue
				}
				for _, r := range st.resources {
					target, _ := refTarget(r)
					if strings.HasPrefix(a, "logs:") && target != lg || strings.HasPrefix(a, "sqs:") && !own[target] {
						t.Errorf("%s: %s may %s beyond its own log group and queues", st.where, role, a)
					}
				}
			}
		}
		if vpc && !slices.ContainsFunc(sts, func(s statement) bool { return slices.Contains(s.actions, "ec2:CreateNetworkInterface") }) {
			t.Errorf("%s (%s): in a VPC without ec2:CreateNetworkInterface", id, role)
		}
		if tracing && !slices.ContainsFunc(sts, func(s statement) bool { return slices.Contains(s.actions, "xray:PutTraceSegments") }) {
			t.Errorf("%s (%s): Tracing Active without xray:PutTraceSegments", id, role)
		}
	}
	for _, id := range tpl.EventSourceMappings() {
		if _, err := tpl.QueueSource(id); err != nil {
			t.Error(err)
		}
	}
}

// The check itself catches what SAM does by default (the template's previous form): a function
// with SAM Policies and no Role, a Type: SQS event, an AWS managed policy, and '*' on an action
// with resource-level permissions.
func TestIAMCheckCatchesSAMDefaults(t *testing.T) {
	tpl, err := Parse([]byte(`
Resources:
  Q: {Type: AWS::SQS::Queue}
  F:
    Type: AWS::Serverless::Function
    Properties:
      Policies:
        - Statement: [{Effect: Allow, Action: sqs:SendMessage, Resource: !GetAtt Q.Arn}]
      Events:
        S: {Type: SQS, Properties: {Queue: !GetAtt Q.Arn}}
  R:
    Type: AWS::IAM::Role
    Properties:
      ManagedPolicyArns: [!Sub "arn:${AWS::Partition}:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"]
      Policies:
        - PolicyName: p
          PolicyDocument:
            Statement:
              - !If [C, {Effect: Allow, Action: [logs:PutLogEvents, xray:PutTraceSegments], Resource: "*"}, !Ref AWS::NoValue]
              - {Effect: Allow, Action: "s3:*", Resource: [!GetAtt Q.Arn]}
`))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(iamProblems(tpl, map[string]string{"xray:PutTraceSegments": "no resource type", "ec2:DescribeSubnets": "no resource type"}), "\n")
	for _, want := range []string{
		"F: no Role of the template",
		"F: Policies",
		"F: event S of type SQS",
		"R: ManagedPolicyArns names a policy outside the template",
		"an AWS managed policy",
		"logs:PutLogEvents on Resource '*'",
		`wildcard action "s3:*"`,
		"lists ec2:DescribeSubnets on '*', but no statement uses it",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("iamProblems missed %q; it found:\n%s", want, got)
		}
	}
	if strings.Contains(got, "xray:PutTraceSegments on Resource") {
		t.Errorf("iamProblems flagged a documented action:\n%s", got)
	}
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
			// Reservations are opt-in (ReserveConcurrency; lifecycle_test.go): with it, one.
			reserving, err := tpl.WithParams(map[string]string{"ReserveConcurrency": "true"})
			if err != nil {
				t.Fatal(err)
			}
			if v, err := reserving.resolve(get(p, "ReservedConcurrentExecutions")); err != nil || toString(v) != "1" {
				t.Errorf("%s: ReservedConcurrentExecutions is not 1 with ReserveConcurrency=true (runs could overlap): %v %v", id, v, err)
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
	if len(trig.QueueSources) == 0 {
		t.Error("TriggerFunction has no queue source")
	}
	for _, ev := range trig.QueueSources {
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
		if d := scalar(get(tpl.resources[id], "DependsOn")); d != schemaMigrationID {
			t.Errorf("%s: DependsOn %q, want %s", id, d, schemaMigrationID)
		}
	}
	if _, err := tpl.resource(schemaMigrationID, "Custom::SchemaMigration"); err != nil {
		t.Error(err)
	}
}

// The parameters' bounds are exactly what the functions accept: a value
// the template allows starts the function, one step outside is refused by
// CloudFormation before any cold start sees it.
func TestParameterBoundsMatchTheCode(t *testing.T) {
	tpl := load(t)
	bound := func(param, key string) int {
		lo, hi := patternRange(t, tpl, param)
		if key == "MinValue" {
			return lo
		}
		return hi
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

// exceptions returns what a Deny statement's conditions exempt from it, through both branches
// of an !If around the Condition: the logical ids named by aws:SourceArn and aws:PrincipalArn
// (!GetAtt X.Arn, !Ref Param).
func exceptions(st statement) (sources, principals map[string]bool) {
	sources, principals = map[string]bool{}, map[string]bool{}
	for _, c := range leaves(get(st.raw, "Condition")) {
		for _, ne := range []*yaml.Node{get(c, "ArnNotEquals"), get(c, "ArnNotLike")} {
			for _, v := range leaves(get(ne, "aws:SourceArn")) {
				if id, ok := refTarget(v); ok {
					sources[id] = true
				}
			}
			for _, v := range leaves(get(ne, "aws:PrincipalArn")) {
				if id, ok := refTarget(v); ok && id != "AWS::NoValue" {
					principals[id] = true
				}
			}
		}
	}
	return sources, principals
}

// covers reports whether st names the resource !GetAtt id.Arn.
func covers(st statement, id string) bool {
	for _, r := range st.resources {
		if fn, arg, ok := intrinsic(r); ok && fn == "Fn::GetAtt" && arg.Value == id+".Arn" {
			return true
		}
	}
	return false
}

// Who may put a message on the rail's queues and a fact on its bus is bounded by resource
// policies, not by the senders' good behaviour: each queue denies sqs:SendMessage to every
// principal but exactly the template roles whose policies send to it (and on-call's role, a
// parameter), the trigger queue to all but its rule; the created bus denies events:PutEvents with
// the rail's source to all but the role that publishes.
func TestResourcePoliciesBoundTheSenders(t *testing.T) {
	tpl := load(t)
	var denies []statement
	for _, id := range tpl.resourcesOfType("AWS::SQS::QueuePolicy") {
		for _, st := range statements(get(get(tpl.resources[id], "Properties"), "PolicyDocument"), id) {
			if scalar(get(st.raw, "Effect")) == "Deny" && slices.Contains(st.actions, "sqs:SendMessage") {
				if scalar(get(st.raw, "Principal")) != "*" {
					t.Errorf("%s: a Deny that does not cover every principal", st.where)
				}
				denies = append(denies, st)
			}
		}
	}
	roles := tpl.resourcesOfType("AWS::IAM::Role")
	for _, q := range tpl.Queues() {
		var deny *statement
		for i := range denies {
			if covers(denies[i], q) {
				deny = &denies[i]
			}
		}
		if deny == nil {
			t.Errorf("%s: no queue policy denies sqs:SendMessage to other principals", q)
			continue
		}
		sources, principals := exceptions(*deny)
		senders := map[string]bool{}
		for _, r := range roles {
			if grants(roleStatements(tpl, r), "sqs:SendMessage", q) {
				senders[r] = true
			}
		}
		for r := range senders {
			if !principals[r] {
				t.Errorf("%s: %s sends to it but %s denies it", q, r, deny.where)
			}
		}
		for p := range principals {
			if !senders[p] && p != "OnCallRoleArn" {
				t.Errorf("%s: %s exempts %s, which does not send to it", q, deny.where, p)
			}
		}
		for src := range sources {
			if targets, _ := tpl.RuleTargets(src); !slices.Contains(targets, q) && !isRuleDLQ(tpl, src, q) {
				t.Errorf("%s: %s exempts %s, which does not deliver to it", q, deny.where, src)
			}
		}
	}
	// The trigger queue: the rule delivers, no role sends.
	for _, st := range denies {
		if covers(st, "TriggerQueue") {
			if sources, _ := exceptions(st); !sources["TriggerRule"] {
				t.Errorf("%s: the rule's delivery is not exempt", st.where)
			}
		}
	}

	// The bus.
	bp := tpl.resources["EventBusPolicy"]
	if bp == nil || scalar(get(bp, "Condition")) != "CreateBus" {
		t.Fatal("no EventBusPolicy on the bus the stack creates (Condition CreateBus)")
	}
	sts := statements(get(bp, "Properties"), "EventBusPolicy")
	if len(sts) != 1 || scalar(get(sts[0].raw, "Effect")) != "Deny" || !slices.Contains(sts[0].actions, "events:PutEvents") ||
		scalar(get(sts[0].raw, "Principal")) != "*" {
		t.Fatalf("EventBusPolicy: want one Deny of events:PutEvents for every principal, got %+v", sts)
	}
	if src, ok := refTarget(get(get(get(sts[0].raw, "Condition"), "StringEquals"), "events:source")); !ok || src != "EventSource" {
		t.Error("EventBusPolicy: the Deny is not keyed on the rail's source (events:source = !Ref EventSource)")
	}
	_, principals := exceptions(sts[0])
	publishers := map[string]bool{}
	for _, r := range roles {
		for _, st := range roleStatements(tpl, r) {
			if slices.Contains(st.actions, "events:PutEvents") {
				publishers[r] = true
			}
		}
	}
	if !maps.Equal(principals, publishers) || len(publishers) != 1 {
		t.Errorf("EventBusPolicy exempts %v; the roles that publish are %v (want exactly the relay's)", principals, publishers)
	}
}

// isRuleDLQ: queue q is rule's target dead-letter queue.
func isRuleDLQ(tpl *Template, rule, q string) bool {
	for _, tg := range items(get(get(tpl.resources[rule], "Properties"), "Targets")) {
		if id, ok := refTarget(get(get(tg, "DeadLetterConfig"), "Arn")); ok && id == q {
			return true
		}
	}
	return false
}

// With KmsKeyArn set, every log group, the created bus and every queue use it, and every role
// that sends to or consumes a queue may use it; without, nothing names it.
func TestKMSKeyOption(t *testing.T) {
	tpl := load(t)
	isKeyIf := func(n *yaml.Node) bool {
		fn, arg, ok := intrinsic(n)
		if !ok || fn != "Fn::If" || len(items(arg)) != 3 || scalar(items(arg)[0]) != "HasKmsKey" {
			return false
		}
		id, ok := refTarget(items(arg)[1])
		return ok && id == "KmsKeyArn"
	}
	for typ, prop := range map[string]string{"AWS::Logs::LogGroup": "KmsKeyId", "AWS::SQS::Queue": "KmsMasterKeyId",
		"AWS::Events::EventBus": "KmsKeyIdentifier"} {
		ids := tpl.resourcesOfType(typ)
		if len(ids) == 0 {
			t.Errorf("no %s", typ)
		}
		for _, id := range ids {
			if !isKeyIf(get(get(tpl.resources[id], "Properties"), prop)) {
				t.Errorf("%s: %s is not !If [HasKmsKey, !Ref KmsKeyArn, ...]", id, prop)
			}
		}
	}
	for _, r := range tpl.resourcesOfType("AWS::IAM::Role") {
		sts := roleStatements(tpl, r)
		usesQueue := false
		for _, q := range tpl.Queues() {
			usesQueue = usesQueue || grants(sts, "sqs:SendMessage", q) || grants(sts, "sqs:ReceiveMessage", q)
		}
		mayUseKey := slices.ContainsFunc(sts, func(st statement) bool {
			id, ok := "", false
			if len(st.resources) == 1 {
				id, ok = refTarget(st.resources[0])
			}
			return ok && id == "KmsKeyArn" && slices.Contains(st.actions, "kms:Decrypt") && slices.Contains(st.actions, "kms:GenerateDataKey")
		})
		if usesQueue != mayUseKey {
			t.Errorf("%s: uses a queue %v, may use the queues' key %v", r, usesQueue, mayUseKey)
		}
	}
}

// The builder invokes Bedrock in the stack's region only, unless BedrockCrossRegion (default
// false) allows the inference profile to route elsewhere; and then only through that profile.
func TestBedrockStaysInTheStacksRegion(t *testing.T) {
	tpl := load(t)
	if def, _ := tpl.Param("BedrockCrossRegion"); def != "false" {
		t.Fatalf("BedrockCrossRegion defaults to %q, want false", def)
	}
	found := 0
	for _, pol := range items(get(get(tpl.resources["BuilderRole"], "Properties"), "Policies")) {
		for _, el := range items(get(get(pol, "PolicyDocument"), "Statement")) {
			cond := ""
			if fn, arg, ok := intrinsic(el); ok && fn == "Fn::If" {
				cond = scalar(items(arg)[0])
			}
			for _, st := range statements(&yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: "Statement"}, el}}, "BuilderRole") {
				if !slices.Contains(st.actions, "bedrock:InvokeModel") {
					continue
				}
				found++
				for _, r := range st.resources {
					if r.Kind != yaml.ScalarNode { // a !Sub's variable map (leaves flattens the !Sub list)
						continue
					}
					arn := r.Value
					anyRegion := strings.Contains(arn, ":bedrock:*:")
					if !anyRegion && !strings.Contains(arn, ":bedrock:${AWS::Region}:") {
						t.Errorf("%s: Bedrock resource %q names no region", st.where, arn)
					}
					if anyRegion && (cond != "BedrockCrossRegionInference" ||
						get(get(get(st.raw, "Condition"), "StringEquals"), "bedrock:InferenceProfileArn") == nil) {
						t.Errorf("%s: %q allows any region outside BedrockCrossRegion, or not only through the profile", st.where, arn)
					}
				}
			}
		}
	}
	if found == 0 {
		t.Fatal("no bedrock:InvokeModel statement on BuilderRole")
	}
}

// No function's database user may be empty (it would connect as the schema owner): the
// parameters refuse "" and a rule refuses DbUser itself.
func TestFunctionDatabaseUsersAreRequired(t *testing.T) {
	tpl := load(t)
	params := get(tpl.root, "Parameters")
	for _, name := range []string{"RelayDbUser", "TriggerDbUser", "BuilderDbUser", "SweeperDbUser"} {
		re, err := regexp.Compile(scalar(get(get(params, name), "AllowedPattern")))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if re.MatchString("") || !re.MatchString("brief_relay") {
			t.Errorf("%s: AllowedPattern %q accepts an empty user (or refuses a role name)", name, re)
		}
	}
	rules := get(tpl.root, "Rules")
	if get(rules, "FunctionUsersAreNotTheOwner") == nil {
		t.Error("no rule refusing DbUser as a function's user")
	}
	for _, id := range tpl.Functions() {
		env := get(get(get(get(tpl.resources[id], "Properties"), "Environment"), "Variables"), "DB_USER")
		if fn, _, ok := intrinsic(env); ok && fn == "Fn::If" {
			t.Errorf("%s: DB_USER falls back to another user", id)
		}
	}
}
