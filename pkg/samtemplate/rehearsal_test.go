package samtemplate

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/pramaan/brief-rail/internal/testenv/ci"
	"github.com/pramaan/brief-rail/internal/testenv/motoserver"
	"github.com/pramaan/brief-rail/pkg/lambdafn"
)

// The resource types moto's CloudFormation cannot model, stripped from the rehearsal with the
// reason; a Ref to one becomes its logical id, a DependsOn on one is dropped.
var rehearsalStrips = map[string]string{
	"Custom::SchemaMigration": "moto does not invoke a custom resource's function (pkg/lambdafn/rie_migrate_test.go runs every path of it under the Lambda runtime)",
}

// The other changes the rehearsal makes for moto, listed in the test's log.
var rehearsalWorkarounds = []string{
	"EventBusName names a bus created beforehand: moto's rule crashes on a Ref to a bus the stack creates",
	"the dashboard's ${Alarm.Arn} substitutions become literal alarm ARNs: moto's alarms have no Arn attribute",
	"implicit dependencies (Ref, GetAtt, Sub) are written out as DependsOn: moto creates resources in template order otherwise",
	"the Rules section is dropped: moto does not evaluate rules (TestVpcEndpointsIncludeS3ForTheReply checks it)",
	"the code is a placeholder zip in a moto S3 bucket (what sam package uploads)",
}

var subRef = regexp.MustCompile(`\$\{([A-Za-z0-9]+)(\.[A-Za-z]+)?\}`)

// rehearsalTemplate is tr's document made deployable into moto: the stripped resources' logical
// ids, and the template.
func rehearsalTemplate(t *testing.T, tr *Translated) ([]string, map[string]any) {
	t.Helper()
	b, err := json.Marshal(tr.Raw)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	res := doc["Resources"].(map[string]any)
	gone := map[string]bool{}
	for id, r := range tr.Resources {
		if _, ok := rehearsalStrips[r.Type]; ok {
			gone[id] = true
			delete(res, id)
		}
	}
	var rewrite func(v any) any
	rewrite = func(v any) any {
		switch n := v.(type) {
		case map[string]any:
			if r, ok := n["Ref"].(string); ok && len(n) == 1 && gone[r] {
				return r
			}
			if s, ok := n["Fn::Sub"].(string); ok && len(n) == 1 {
				return map[string]any{"Fn::Sub": subRef.ReplaceAllStringFunc(s, func(m string) string {
					p := subRef.FindStringSubmatch(m)
					switch {
					case gone[p[1]]:
						return p[1]
					case p[2] == ".Arn" && tr.Resources[p[1]].Type == "AWS::CloudWatch::Alarm":
						return "arn:aws:cloudwatch:" + motoserver.Region + ":123456789012:alarm:" + p[1]
					}
					return m
				})}
			}
			out := map[string]any{}
			for k, c := range n {
				out[k] = rewrite(c)
			}
			return out
		case []any:
			out := make([]any, len(n))
			for i, c := range n {
				out[i] = rewrite(c)
			}
			return out
		}
		return v
	}
	var refs func(v any, acc map[string]bool)
	refs = func(v any, acc map[string]bool) {
		switch n := v.(type) {
		case map[string]any:
			for k, c := range n {
				switch k {
				case "Ref":
					if s, ok := c.(string); ok {
						acc[s] = true
					}
				case "Fn::GetAtt":
					if l, ok := c.([]any); ok && len(l) > 0 {
						acc[fmt.Sprint(l[0])] = true
					}
				case "Fn::Sub":
					s, _ := c.(string)
					if l, ok := c.([]any); ok && len(l) == 2 {
						s, _ = l[0].(string)
						refs(l[1], acc)
					}
					for _, m := range subRef.FindAllStringSubmatch(s, -1) {
						acc[m[1]] = true
					}
				default:
					refs(c, acc)
				}
			}
		case []any:
			for _, c := range n {
				refs(c, acc)
			}
		}
	}
	for id, rv := range res {
		r := rewrite(rv).(map[string]any)
		deps := map[string]bool{}
		switch d := r["DependsOn"].(type) {
		case string:
			deps[d] = true
		case []any:
			for _, x := range d {
				deps[fmt.Sprint(x)] = true
			}
		}
		refs(r["Properties"], deps)
		var list []string
		for d := range deps {
			if _, ok := res[d]; ok && d != id {
				list = append(list, d)
			}
		}
		slices.Sort(list)
		delete(r, "DependsOn")
		if len(list) > 0 {
			r["DependsOn"] = list
		}
		res[id] = r
	}
	doc["Outputs"] = rewrite(doc["Outputs"])
	delete(doc, "Rules")
	return slices.Sorted(maps.Keys(gone)), doc
}

// cli runs the AWS CLI against srv; with out, the JSON it prints is decoded into it.
func cli(t *testing.T, srv *motoserver.Server, out any, args ...string) {
	t.Helper()
	cmd := exec.Command("aws", append([]string{"--output", "json"}, args...)...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "AWS_MAX_ATTEMPTS=2"}, srv.Env()...)
	b, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("aws %s: %v\n%s", strings.Join(args, " "), err, ee.Stderr)
		}
		t.Fatalf("aws %s: %v", strings.Join(args, " "), err)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("aws %s: %v: %s", strings.Join(args, " "), err, b)
		}
	}
}

// The translated template, deployed into moto_server's CloudFormation: the stack reaches
// CREATE_COMPLETE, and what it built is what the template says — queue attributes and redrive,
// the three mappings, the rule with its target and DLQ, the log groups and their retention, a
// dashboard body that parses once substituted, the Outputs — and every function's resulting
// environment starts (LoadConfig).
func TestCloudFormationRehearsalInMoto(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("aws"); err != nil {
		ci.MissingTool(t, "the AWS CLI is not installed")
	}
	tr := translated(t)
	tpl := load(t)
	stripped, doc := rehearsalTemplate(t, tr)
	for _, id := range stripped {
		t.Logf("stripped %s (%s): %s", id, tr.Resources[id].Type, rehearsalStrips[tr.Resources[id].Type])
	}
	for _, w := range rehearsalWorkarounds {
		t.Logf("for moto: %s", w)
	}

	srv, err := motoserver.Start(context.Background(), nil)
	if errors.Is(err, motoserver.ErrNotInstalled) {
		ci.MissingTool(t, err.Error())
	}
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Stop() }()
	dir := t.TempDir()
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	if w, err := zw.Create("bootstrap"); err != nil {
		t.Fatal(err)
	} else {
		_, _ = w.Write([]byte("placeholder"))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	zipPath, tplPath := filepath.Join(dir, "code.zip"), filepath.Join(dir, "template.json")
	body, _ := json.Marshal(doc)
	if err := os.WriteFile(zipPath, zb.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tplPath, body, 0o600); err != nil {
		t.Fatal(err)
	}
	cli(t, srv, nil, "s3api", "create-bucket", "--bucket", "brief-rail-artifacts")
	cli(t, srv, nil, "s3api", "put-object", "--bucket", "brief-rail-artifacts", "--key", "code.zip", "--body", zipPath)
	const bus = "brief-rail-app"
	cli(t, srv, nil, "events", "create-event-bus", "--name", bus)
	params := []string{"SubnetIds=subnet-0a1b2c3d", "SecurityGroupIds=sg-0a1b2c3d", "VpcId=vpc-0a1b2c3d",
		"DbProxyEndpoint=brief-rail.proxy-abcdefghijkl." + motoserver.Region + ".rds.amazonaws.com",
		"DbProxyResourceId=prx-0123456789abcdef0", "EventBusName=" + bus}
	args := []string{"cloudformation", "create-stack", "--stack-name", "brief-rail", "--template-body", "file://" + tplPath,
		"--capabilities", "CAPABILITY_IAM", "--parameters"}
	for _, p := range params {
		k, v, _ := strings.Cut(p, "=")
		args = append(args, "ParameterKey="+k+",ParameterValue="+strings.ReplaceAll(v, ",", `\,`))
	}
	cli(t, srv, nil, args...)

	var stacks struct {
		Stacks []struct {
			StackStatus, StackStatusReason string
			Outputs                        []struct{ OutputKey, OutputValue string }
		}
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		cli(t, srv, &stacks, "cloudformation", "describe-stacks", "--stack-name", "brief-rail")
		if st := stacks.Stacks[0].StackStatus; !strings.HasSuffix(st, "_IN_PROGRESS") || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	if st := stacks.Stacks[0]; st.StackStatus != "CREATE_COMPLETE" {
		var ev any
		cli(t, srv, &ev, "cloudformation", "describe-stack-events", "--stack-name", "brief-rail")
		t.Fatalf("stack %s: %s\n%v", st.StackStatus, st.StackStatusReason, ev)
	}
	outputs := map[string]string{}
	for _, o := range stacks.Stacks[0].Outputs {
		outputs[o.OutputKey] = o.OutputValue
	}
	for k := range tr.Outputs {
		if outputs[k] == "" {
			t.Errorf("output %s is empty", k)
		}
	}

	var sr struct {
		StackResources []struct {
			LogicalResourceID  string  `json:"LogicalResourceId"`
			ResourceType       *string `json:"ResourceType"`
			PhysicalResourceID *string `json:"PhysicalResourceId"`
		}
	}
	cli(t, srv, &sr, "cloudformation", "describe-stack-resources", "--stack-name", "brief-rail")
	phys := map[string]string{}
	for _, r := range sr.StackResources {
		if r.PhysicalResourceID != nil {
			phys[r.LogicalResourceID] = *r.PhysicalResourceID
		}
	}
	var unmodelled, conditional []string
	for id := range doc["Resources"].(map[string]any) {
		if _, ok := phys[id]; ok {
			continue
		}
		if c := tr.Resources[id].Condition; c != "" {
			conditional = append(conditional, id+" ("+c+")")
		} else {
			unmodelled = append(unmodelled, id+" ("+tr.Resources[id].Type+")")
		}
	}
	slices.Sort(unmodelled)
	slices.Sort(conditional)
	t.Logf("not created, their condition false with these parameters: %s", strings.Join(conditional, ", "))
	t.Logf("accepted by moto but not modelled (no physical resource; asserted by the translated-template tests instead): %s", strings.Join(unmodelled, ", "))

	// Queues: the template's attributes and redrive, as deployed.
	awsCfg, err := srv.AWSConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sq := sqs.NewFromConfig(awsCfg)
	ctx := context.Background()
	arnOf := func(qurl string) string {
		out, err := sq.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(qurl),
			AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
		if err != nil {
			t.Fatal(err)
		}
		return out.Attributes["QueueArn"]
	}
	for _, q := range tpl.Queues() {
		spec, err := tpl.Queue(q)
		if err != nil {
			t.Fatal(err)
		}
		qurl := phys[q]
		if qurl == "" {
			t.Errorf("queue %s was not created", q)
			continue
		}
		dlqARN := ""
		if spec.DLQ != "" {
			dlqARN = arnOf(phys[spec.DLQ])
		}
		want := spec.Attributes(dlqARN)
		out, err := sq.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(qurl),
			AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameAll}})
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range want {
			got := out.Attributes[k]
			if k == "RedrivePolicy" {
				var a, b any
				_ = json.Unmarshal([]byte(got), &a)
				_ = json.Unmarshal([]byte(v), &b)
				if fmt.Sprint(a) == fmt.Sprint(b) {
					continue
				}
			}
			if got != v {
				t.Errorf("queue %s: %s = %q, the template says %q", q, k, got, v)
			}
		}
	}
	for _, q := range []string{"TriggerDLQ", "BuildDLQ", "BackfillDLQ"} {
		if u, _ := url.Parse(phys[q]); u == nil || !strings.HasSuffix(u.Path, "/brief-rail-dev-"+strings.ToLower(strings.TrimSuffix(q, "DLQ"))+"-dlq") {
			t.Errorf("retained %s is %q, want the name brief-rail-dev-…-dlq", q, phys[q])
		}
	}

	// The three mappings.
	type mapping struct {
		UUID, EventSourceArn, FunctionArn, State string
		BatchSize                                int
		FunctionResponseTypes                    []string
		ScalingConfig                            struct{ MaximumConcurrency int }
	}
	var mappings struct{ EventSourceMappings []mapping }
	cli(t, srv, &mappings, "lambda", "list-event-source-mappings")
	byUUID := map[string]mapping{}
	for _, m := range mappings.EventSourceMappings {
		byUUID[m.UUID] = m
	}
	for _, m := range tpl.EventSourceMappings() {
		qs, err := tpl.QueueSource(m)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := byUUID[phys[m]]
		if !ok || got.BatchSize != qs.BatchSize || got.EventSourceArn != arnOf(phys[qs.Queue]) ||
			!strings.HasSuffix(got.FunctionArn, ":function:"+phys[qs.Function]) ||
			!reflect.DeepEqual(got.FunctionResponseTypes, qs.FunctionResponseTypes) ||
			got.ScalingConfig.MaximumConcurrency != qs.MaximumConcurrency || got.State != "Enabled" {
			t.Errorf("mapping %s as deployed: %+v; the template says %+v", m, got, qs)
		}
	}

	// The rule: its pattern, its target the trigger queue, its DLQ the trigger DLQ.
	var rule struct{ EventPattern, State string }
	cli(t, srv, &rule, "events", "describe-rule", "--event-bus-name", bus, "--name", phys["TriggerRule"])
	wantPattern, err := tpl.RulePattern("TriggerRule")
	if err != nil {
		t.Fatal(err)
	}
	var gp, wp any
	_ = json.Unmarshal([]byte(rule.EventPattern), &gp)
	_ = json.Unmarshal(wantPattern, &wp)
	if !reflect.DeepEqual(gp, wp) || rule.State != "ENABLED" {
		t.Errorf("rule as deployed: %s %s; the template says %s", rule.State, rule.EventPattern, wantPattern)
	}
	var targets struct {
		Targets []struct {
			Arn              string
			DeadLetterConfig struct{ Arn string }
		}
	}
	cli(t, srv, &targets, "events", "list-targets-by-rule", "--event-bus-name", bus, "--rule", phys["TriggerRule"])
	if len(targets.Targets) != 1 || targets.Targets[0].Arn != arnOf(phys["TriggerQueue"]) ||
		targets.Targets[0].DeadLetterConfig.Arn != arnOf(phys["TriggerDLQ"]) {
		t.Errorf("rule targets %+v: want the trigger queue with the trigger DLQ", targets.Targets)
	}

	// Log groups and their retention.
	var lgs struct {
		LogGroups []struct {
			LogGroupName    string
			RetentionInDays int
		}
	}
	cli(t, srv, &lgs, "logs", "describe-log-groups", "--log-group-name-prefix", "/aws/lambda/brief-rail-dev-")
	retention := map[string]int{}
	for _, g := range lgs.LogGroups {
		retention[g.LogGroupName] = g.RetentionInDays
	}
	for _, fn := range []string{"relay", "trigger", "builder", "sweeper", "migrate"} {
		if retention["/aws/lambda/brief-rail-dev-"+fn] != 30 {
			t.Errorf("log group /aws/lambda/brief-rail-dev-%s: retention %v (groups %v)", fn, retention["/aws/lambda/brief-rail-dev-"+fn], retention)
		}
	}

	// The dashboard body, substituted by CloudFormation, parses.
	var dash struct{ DashboardBody string }
	cli(t, srv, &dash, "cloudwatch", "get-dashboard", "--dashboard-name", phys["Dashboard"])
	var board struct {
		Widgets []map[string]any `json:"widgets"`
	}
	if err := json.Unmarshal([]byte(dash.DashboardBody), &board); err != nil || len(board.Widgets) < 10 {
		t.Errorf("the deployed dashboard body does not parse (%v) or has %d widgets", err, len(board.Widgets))
	}
	if strings.Contains(dash.DashboardBody, "${") || !strings.Contains(dash.DashboardBody, phys["BuildDLQ"][strings.LastIndex(phys["BuildDLQ"], "/")+1:]) {
		t.Errorf("the deployed dashboard body is not fully substituted: %.300s", dash.DashboardBody)
	}

	// Every function's environment, as deployed, starts.
	var fns struct {
		Functions []struct {
			FunctionName string
			Environment  struct{ Variables map[string]string }
		}
	}
	cli(t, srv, &fns, "lambda", "list-functions")
	envOf := map[string]map[string]string{}
	for _, f := range fns.Functions {
		envOf[f.FunctionName] = f.Environment.Variables
	}
	for _, fn := range tpl.Functions() {
		env, ok := envOf[phys[fn]]
		if !ok {
			t.Errorf("%s (%s) was not created", fn, phys[fn])
			continue
		}
		if _, err := lambdafn.LoadConfig(fnNames[fn], func(k string) string { return env[k] }); err != nil {
			t.Errorf("%s as deployed: %v", fn, err)
		}
		if fn != "MigrateFunction" && fn != "RelayFunction" && env["RAIL_BUILD_QUEUE_URL"] != outputs["BuildQueueUrl"] {
			t.Errorf("%s: RAIL_BUILD_QUEUE_URL %q, the stack's build queue is %q", fn, env["RAIL_BUILD_QUEUE_URL"], outputs["BuildQueueUrl"])
		}
		if env["RAIL_EVENT_BUS"] != bus || outputs[fn+"Name"] != phys[fn] {
			t.Errorf("%s: RAIL_EVENT_BUS %q, output name %q (function %q)", fn, env["RAIL_EVENT_BUS"], outputs[fn+"Name"], phys[fn])
		}
	}
}
