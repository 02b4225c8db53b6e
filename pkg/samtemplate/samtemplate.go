// Package samtemplate reads the project's AWS SAM template (template.yaml) so that tests and the
// local runner build the same wiring the deployed stack has: the trigger rule's event pattern, the
// queues' delays, visibility and redrive, each function's timeout, environment and schedules, and
// the event source mappings that feed the functions from the queues.
//
// It is a reader, not a CloudFormation engine. CloudFormation short-form tags (!Ref, !Sub,
// !GetAtt, !If, ...) and their long forms (Ref, Fn::Sub, ...) are understood well enough to
// extract values: a Ref or Sub naming only parameters resolves to the parameter's default (or an
// override given to WithParams); Fn::If is evaluated when its condition depends only on
// parameters; a reference to a resource, a pseudo parameter or an attribute does not resolve
// (ErrUnresolved).
package samtemplate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// ErrUnresolved reports a value that depends on something only CloudFormation knows at deploy
// time (a resource, a pseudo parameter, an attribute, a parameter without a default).
var ErrUnresolved = errors.New("samtemplate: value is only known at deploy time")

// Template is a parsed SAM template. It is safe for concurrent reads.
type Template struct {
	path      string
	root      *yaml.Node // the top-level mapping
	params    map[string]string
	hasDef    map[string]bool
	overrides map[string]string
	resources map[string]*yaml.Node // logical id -> resource mapping
	conds     map[string]*yaml.Node
	globalsFn *yaml.Node // Globals.Function mapping, or nil
	// refsAsIDs: a Ref to a resource resolves to its logical id (what `sam local` does).
	refsAsIDs bool
}

// QueueSpec is what an AWS::SQS::Queue declares, with SQS defaults filled in for absent settings.
type QueueSpec struct {
	LogicalID              string
	DelaySeconds           int // default 0
	VisibilityTimeout      int // seconds; default 30
	MessageRetentionPeriod int // seconds; default 345600 (4 days)
	RedriveMaxReceiveCount int // 0 when the queue has no RedrivePolicy
	DLQ                    string
	SqsManagedSSE          bool
}

// FunctionSpec is what an AWS::Serverless::Function declares, with Globals.Function merged in
// (the function's own settings win).
type FunctionSpec struct {
	LogicalID     string
	Runtime       string
	Handler       string
	CodeURI       string
	Architectures []string
	BuildMethod   string // Metadata.BuildMethod
	Timeout       int    // seconds; Lambda's default 3 when absent
	MemorySize    int    // MB; Lambda's default 128 when absent
	// Env holds the environment variables whose values resolve from the template alone.
	Env map[string]string
	// EnvUnresolved names the variables whose values are only known at deploy time (queue URLs,
	// created resource names), sorted.
	EnvUnresolved []string
	Events        []EventSpec // sorted by Name
	// QueueSources are the event source mappings whose FunctionName names this function, sorted by
	// LogicalID.
	QueueSources []QueueSource
}

// EventSpec is one entry of a function's Events (SAM event sources: schedules). Queues feed the
// functions through AWS::Lambda::EventSourceMapping resources instead (QueueSource).
type EventSpec struct {
	Name string
	Type string // ScheduleV2, Schedule, ...

	// ScheduleV2 / Schedule
	ScheduleExpression string
	Input              string
}

// QueueSource is an AWS::Lambda::EventSourceMapping that feeds a function from an SQS queue of the
// template, with Lambda's defaults filled in for absent settings.
type QueueSource struct {
	LogicalID                      string // the mapping
	Function                       string // logical id of the function (FunctionName: !Ref F)
	Queue                          string // logical id of the queue (EventSourceArn: !GetAtt Q.Arn)
	BatchSize                      int    // default 10
	MaximumBatchingWindowInSeconds int
	FunctionResponseTypes          []string
	MaximumConcurrency             int  // ScalingConfig.MaximumConcurrency; 0 when unset
	Enabled                        bool // default true
}

// EnvNames returns the names of every environment variable the function gets, resolved or not,
// sorted.
func (f FunctionSpec) EnvNames() []string {
	names := slices.Collect(maps.Keys(f.Env))
	names = append(names, f.EnvUnresolved...)
	slices.Sort(names)
	return names
}

// Load reads and parses the template at path.
func Load(path string) (*Template, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("samtemplate: %w", err)
	}
	t, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("samtemplate: %s: %w", path, errors.Unwrap(err))
	}
	t.path = path
	return t, nil
}

// Parse parses a template from memory.
func Parse(data []byte) (*Template, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("samtemplate: %w", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("samtemplate: %w", errors.New("template is not a YAML mapping"))
	}
	t := &Template{
		root:      doc.Content[0],
		params:    map[string]string{},
		hasDef:    map[string]bool{},
		overrides: map[string]string{},
		resources: map[string]*yaml.Node{},
		conds:     map[string]*yaml.Node{},
	}
	for name, p := range pairs(get(t.root, "Parameters")) {
		if d := get(p, "Default"); d != nil && d.Kind == yaml.ScalarNode {
			t.params[name], t.hasDef[name] = d.Value, true
		} else {
			t.params[name] = ""
		}
	}
	for name, c := range pairs(get(t.root, "Conditions")) {
		t.conds[name] = c
	}
	res := get(t.root, "Resources")
	if res == nil || res.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("samtemplate: %w", errors.New("template has no Resources mapping"))
	}
	for id, r := range pairs(res) {
		t.resources[id] = r
	}
	t.globalsFn = get(get(t.root, "Globals"), "Function")
	return t, nil
}

// Path is the file the template was loaded from ("" when parsed from memory).
func (t *Template) Path() string { return t.path }

// WithParams returns a copy of the template whose parameter values are overridden; names must be
// declared parameters.
func (t *Template) WithParams(overrides map[string]string) (*Template, error) {
	c := *t
	c.overrides = maps.Clone(t.overrides)
	for k, v := range overrides {
		if _, ok := t.params[k]; !ok {
			return nil, fmt.Errorf("samtemplate: no parameter %q", k)
		}
		c.overrides[k] = v
	}
	return &c, nil
}

// Param returns a parameter's value: the override given to WithParams, else its Default. ok is
// false for an undeclared parameter or one with neither.
func (t *Template) Param(name string) (string, bool) {
	if v, ok := t.overrides[name]; ok {
		return v, true
	}
	return t.params[name], t.hasDef[name]
}

// Functions returns the logical ids of the AWS::Serverless::Function resources, sorted.
func (t *Template) Functions() []string { return t.resourcesOfType("AWS::Serverless::Function") }

// EventSourceMappings returns the logical ids of the AWS::Lambda::EventSourceMapping resources,
// sorted.
func (t *Template) EventSourceMappings() []string {
	return t.resourcesOfType("AWS::Lambda::EventSourceMapping")
}

// Queues returns the logical ids of the AWS::SQS::Queue resources, sorted.
func (t *Template) Queues() []string { return t.resourcesOfType("AWS::SQS::Queue") }

func (t *Template) resourcesOfType(typ string) []string {
	var ids []string
	for id, r := range t.resources {
		if scalar(get(r, "Type")) == typ {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

func (t *Template) resource(id, typ string) (*yaml.Node, error) {
	r, ok := t.resources[id]
	if !ok {
		return nil, fmt.Errorf("samtemplate: no resource %q", id)
	}
	if got := scalar(get(r, "Type")); got != typ {
		return nil, fmt.Errorf("samtemplate: resource %q is %s, not %s", id, got, typ)
	}
	return r, nil
}

// RulePattern returns the EventPattern of the AWS::Events::Rule logicalID as JSON, with parameter
// references resolved.
func (t *Template) RulePattern(logicalID string) (json.RawMessage, error) {
	r, err := t.resource(logicalID, "AWS::Events::Rule")
	if err != nil {
		return nil, err
	}
	p := get(get(r, "Properties"), "EventPattern")
	if p == nil {
		return nil, fmt.Errorf("samtemplate: rule %q has no EventPattern", logicalID)
	}
	v, err := t.resolve(p)
	if err != nil {
		return nil, fmt.Errorf("samtemplate: rule %q EventPattern: %w", logicalID, err)
	}
	if s, ok := v.(string); ok { // CloudFormation also accepts the pattern as a JSON string
		if !json.Valid([]byte(s)) {
			return nil, fmt.Errorf("samtemplate: rule %q EventPattern is not JSON", logicalID)
		}
		return json.RawMessage(s), nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // keep ">" and "<" of numeric matchers readable
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("samtemplate: rule %q EventPattern: %w", logicalID, err)
	}
	return bytes.TrimSpace(buf.Bytes()), nil
}

// RuleTargets returns the logical ids of the resources the rule targets (from !GetAtt X.Arn or
// !Ref X), in declaration order.
func (t *Template) RuleTargets(logicalID string) ([]string, error) {
	r, err := t.resource(logicalID, "AWS::Events::Rule")
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, tg := range items(get(get(r, "Properties"), "Targets")) {
		id, ok := refTarget(get(tg, "Arn"))
		if !ok {
			return nil, fmt.Errorf("samtemplate: rule %q has a target that is not a resource in the template", logicalID)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// Queue returns the settings of the AWS::SQS::Queue logicalID.
func (t *Template) Queue(logicalID string) (QueueSpec, error) {
	r, err := t.resource(logicalID, "AWS::SQS::Queue")
	if err != nil {
		return QueueSpec{}, err
	}
	props := get(r, "Properties")
	q := QueueSpec{LogicalID: logicalID, VisibilityTimeout: 30, MessageRetentionPeriod: 345600}
	for key, dst := range map[string]*int{
		"DelaySeconds":           &q.DelaySeconds,
		"VisibilityTimeout":      &q.VisibilityTimeout,
		"MessageRetentionPeriod": &q.MessageRetentionPeriod,
	} {
		if err := t.intProp(props, key, dst); err != nil {
			return QueueSpec{}, fmt.Errorf("samtemplate: queue %q: %w", logicalID, err)
		}
	}
	if n := get(props, "SqsManagedSseEnabled"); n != nil {
		v, err := t.resolve(n)
		if err != nil {
			return QueueSpec{}, fmt.Errorf("samtemplate: queue %q SqsManagedSseEnabled: %w", logicalID, err)
		}
		q.SqsManagedSSE = v == true || v == "true"
	}
	if rp := get(props, "RedrivePolicy"); rp != nil {
		if err := t.redrive(rp, &q); err != nil {
			return QueueSpec{}, fmt.Errorf("samtemplate: queue %q RedrivePolicy: %w", logicalID, err)
		}
	}
	return q, nil
}

func (t *Template) redrive(rp *yaml.Node, q *QueueSpec) error {
	if rp.Kind == yaml.ScalarNode { // a JSON string: {"deadLetterTargetArn": "...", "maxReceiveCount": 5}
		var m struct {
			Target string          `json:"deadLetterTargetArn"`
			Max    json.RawMessage `json:"maxReceiveCount"`
		}
		if err := json.Unmarshal([]byte(rp.Value), &m); err != nil {
			return err
		}
		n, err := strconv.Atoi(strings.Trim(string(m.Max), `"`))
		if err != nil {
			return fmt.Errorf("maxReceiveCount: %w", err)
		}
		q.RedriveMaxReceiveCount = n
		if i := strings.LastIndex(m.Target, ":"); i >= 0 {
			q.DLQ = m.Target[i+1:] // a literal ARN: the queue name, not a logical id
		}
		return nil
	}
	if err := t.intProp(rp, "maxReceiveCount", &q.RedriveMaxReceiveCount); err != nil {
		return err
	}
	id, ok := refTarget(get(rp, "deadLetterTargetArn"))
	if !ok {
		return errors.New("deadLetterTargetArn does not name a queue in the template")
	}
	q.DLQ = id
	return nil
}

// Function returns the settings of the AWS::Serverless::Function logicalID.
func (t *Template) Function(logicalID string) (FunctionSpec, error) {
	r, err := t.resource(logicalID, "AWS::Serverless::Function")
	if err != nil {
		return FunctionSpec{}, err
	}
	props := get(r, "Properties")
	f := FunctionSpec{LogicalID: logicalID, Timeout: 3, MemorySize: 128, Env: map[string]string{}}
	fail := func(err error) (FunctionSpec, error) {
		return FunctionSpec{}, fmt.Errorf("samtemplate: function %q: %w", logicalID, err)
	}
	for _, src := range []*yaml.Node{t.globalsFn, props} { // later wins
		if src == nil {
			continue
		}
		for key, dst := range map[string]*string{"Runtime": &f.Runtime, "Handler": &f.Handler, "CodeUri": &f.CodeURI} {
			if err := t.stringProp(src, key, dst); err != nil {
				return fail(err)
			}
		}
		for key, dst := range map[string]*int{"Timeout": &f.Timeout, "MemorySize": &f.MemorySize} {
			if err := t.intProp(src, key, dst); err != nil {
				return fail(err)
			}
		}
		if a := get(src, "Architectures"); a != nil {
			v, err := t.resolve(a)
			if err != nil {
				return fail(fmt.Errorf("Architectures: %w", err))
			}
			f.Architectures = toStrings(v)
		}
		for name, val := range pairs(get(get(src, "Environment"), "Variables")) {
			v, err := t.resolve(val)
			f.EnvUnresolved = slices.DeleteFunc(f.EnvUnresolved, func(s string) bool { return s == name })
			delete(f.Env, name)
			switch {
			case errors.Is(err, ErrUnresolved):
				f.EnvUnresolved = append(f.EnvUnresolved, name)
			case err != nil:
				return fail(fmt.Errorf("Environment %s: %w", name, err))
			default:
				f.Env[name] = toString(v)
			}
		}
	}
	slices.Sort(f.EnvUnresolved)
	f.BuildMethod = scalar(get(get(r, "Metadata"), "BuildMethod"))
	for name, ev := range pairs(get(props, "Events")) {
		e, err := t.event(name, ev)
		if err != nil {
			return fail(err)
		}
		f.Events = append(f.Events, e)
	}
	slices.SortFunc(f.Events, func(a, b EventSpec) int { return strings.Compare(a.Name, b.Name) })
	for _, id := range t.EventSourceMappings() {
		if fn, ok := refTarget(get(get(t.resources[id], "Properties"), "FunctionName")); !ok || fn != logicalID {
			continue
		}
		qs, err := t.QueueSource(id)
		if err != nil {
			return fail(err)
		}
		f.QueueSources = append(f.QueueSources, qs)
	}
	return f, nil
}

// QueueSource returns the settings of the AWS::Lambda::EventSourceMapping logicalID, which must
// feed a function of the template from a queue of the template.
func (t *Template) QueueSource(logicalID string) (QueueSource, error) {
	r, err := t.resource(logicalID, "AWS::Lambda::EventSourceMapping")
	if err != nil {
		return QueueSource{}, err
	}
	p := get(r, "Properties")
	fail := func(err error) (QueueSource, error) {
		return QueueSource{}, fmt.Errorf("samtemplate: event source mapping %q: %w", logicalID, err)
	}
	qs := QueueSource{LogicalID: logicalID, BatchSize: 10, Enabled: true}
	var ok bool
	if qs.Function, ok = refTarget(get(p, "FunctionName")); !ok {
		return fail(errors.New("FunctionName does not name a function in the template"))
	}
	if qs.Queue, ok = refTarget(get(p, "EventSourceArn")); !ok {
		return fail(errors.New("EventSourceArn does not name a queue in the template"))
	}
	if _, err := t.resource(qs.Queue, "AWS::SQS::Queue"); err != nil {
		return fail(err)
	}
	for key, dst := range map[string]*int{"BatchSize": &qs.BatchSize, "MaximumBatchingWindowInSeconds": &qs.MaximumBatchingWindowInSeconds} {
		if err := t.intProp(p, key, dst); err != nil {
			return fail(err)
		}
	}
	if err := t.intProp(get(p, "ScalingConfig"), "MaximumConcurrency", &qs.MaximumConcurrency); err != nil {
		return fail(err)
	}
	if n := get(p, "FunctionResponseTypes"); n != nil {
		v, err := t.resolve(n)
		if err != nil {
			return fail(fmt.Errorf("FunctionResponseTypes: %w", err))
		}
		qs.FunctionResponseTypes = toStrings(v)
	}
	if n := get(p, "Enabled"); n != nil {
		v, err := t.resolve(n)
		if err != nil {
			return fail(fmt.Errorf("Enabled: %w", err))
		}
		qs.Enabled = v == true || v == "true"
	}
	return qs, nil
}

func (t *Template) event(name string, ev *yaml.Node) (EventSpec, error) {
	e := EventSpec{Name: name, Type: scalar(get(ev, "Type"))}
	p := get(ev, "Properties")
	fail := func(err error) (EventSpec, error) { return EventSpec{}, fmt.Errorf("event %s: %w", name, err) }
	switch e.Type {
	case "Schedule", "ScheduleV2":
		for key, dst := range map[string]*string{"ScheduleExpression": &e.ScheduleExpression, "Input": &e.Input} {
			if err := t.stringProp(p, key, dst); err != nil {
				return fail(err)
			}
		}
	}
	return e, nil
}

func (t *Template) intProp(m *yaml.Node, key string, dst *int) error {
	n := get(m, key)
	if n == nil {
		return nil
	}
	v, err := t.resolve(n)
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	i, err := strconv.Atoi(toString(v))
	if err != nil {
		return fmt.Errorf("%s: not an integer: %v", key, v)
	}
	*dst = i
	return nil
}

func (t *Template) stringProp(m *yaml.Node, key string, dst *string) error {
	n := get(m, key)
	if n == nil {
		return nil
	}
	v, err := t.resolve(n)
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	*dst = toString(v)
	return nil
}

// ---------------------------------------------------------------- intrinsic functions

// intrinsic recognises a short-form tag (!Ref x) or a one-key long form ({Ref: x}, {Fn::Sub: x})
// and returns the function's long name and its argument.
func intrinsic(n *yaml.Node) (string, *yaml.Node, bool) {
	n = deref(n)
	if n == nil {
		return "", nil, false
	}
	if strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") {
		name := strings.TrimPrefix(n.Tag, "!")
		if name != "Ref" && name != "Condition" {
			name = "Fn::" + name
		}
		arg := *n
		arg.Tag = "" // the tagged node read as its plain value
		return name, &arg, true
	}
	if n.Kind == yaml.MappingNode && len(n.Content) == 2 {
		k := n.Content[0].Value
		if k == "Ref" || k == "Condition" || strings.HasPrefix(k, "Fn::") {
			return k, n.Content[1], true
		}
	}
	return "", nil, false
}

// refTarget returns the logical id named by !Ref X, !GetAtt X.Attr or !GetAtt [X, Attr].
func refTarget(n *yaml.Node) (string, bool) {
	fn, arg, ok := intrinsic(n)
	if !ok {
		return "", false
	}
	switch fn {
	case "Ref":
		return arg.Value, arg.Kind == yaml.ScalarNode
	case "Fn::GetAtt":
		if arg.Kind == yaml.ScalarNode {
			id, _, _ := strings.Cut(arg.Value, ".")
			return id, id != ""
		}
		if arg.Kind == yaml.SequenceNode && len(arg.Content) == 2 {
			return arg.Content[0].Value, true
		}
	}
	return "", false
}

// resolve turns a node into plain Go values (string, int64, float64, bool, nil, []any,
// map[string]any), evaluating what the template alone determines.
func (t *Template) resolve(n *yaml.Node) (any, error) {
	n = deref(n)
	if n == nil {
		return nil, nil
	}
	if fn, arg, ok := intrinsic(n); ok {
		return t.call(fn, arg)
	}
	switch n.Kind {
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!int":
			if i, err := strconv.ParseInt(n.Value, 0, 64); err == nil {
				return i, nil
			}
		case "!!float":
			if f, err := strconv.ParseFloat(n.Value, 64); err == nil {
				return f, nil
			}
		case "!!bool":
			var b bool
			if err := n.Decode(&b); err == nil {
				return b, nil
			}
		case "!!null":
			return nil, nil
		}
		return n.Value, nil
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			if fn, arg, ok := intrinsic(c); ok && fn == "Ref" && arg.Value == "AWS::NoValue" {
				continue
			}
			v, err := t.resolve(c)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		out := map[string]any{}
		for k, c := range pairs(n) {
			v, err := t.resolve(c)
			if err != nil {
				return nil, err
			}
			out[k] = v
		}
		return out, nil
	}
	return nil, fmt.Errorf("unsupported YAML node kind %v", n.Kind)
}

func (t *Template) call(fn string, arg *yaml.Node) (any, error) {
	switch fn {
	case "Ref":
		if v, ok := t.Param(arg.Value); ok {
			return v, nil
		}
		if _, ok := t.resources[arg.Value]; ok && t.refsAsIDs {
			return arg.Value, nil
		}
		return nil, fmt.Errorf("%w: !Ref %s", ErrUnresolved, arg.Value)
	case "Fn::Sub":
		return t.sub(arg)
	case "Fn::If":
		if arg.Kind != yaml.SequenceNode || len(arg.Content) != 3 {
			return nil, errors.New("!If needs [condition, then, else]")
		}
		c, err := t.condition(arg.Content[0].Value, 0)
		if err != nil {
			return nil, err
		}
		if c {
			return t.resolve(arg.Content[1])
		}
		return t.resolve(arg.Content[2])
	case "Fn::Join":
		if arg.Kind != yaml.SequenceNode || len(arg.Content) != 2 {
			return nil, errors.New("!Join needs [delimiter, list]")
		}
		parts, err := t.resolve(arg.Content[1])
		if err != nil {
			return nil, err
		}
		return strings.Join(toStrings(parts), arg.Content[0].Value), nil
	}
	return nil, fmt.Errorf("%w: %s", ErrUnresolved, fn)
}

var subVar = regexp.MustCompile(`\$\{([^}]*)\}`)

func (t *Template) sub(arg *yaml.Node) (any, error) {
	format, vars := arg, (*yaml.Node)(nil)
	if arg.Kind == yaml.SequenceNode {
		if len(arg.Content) != 2 {
			return nil, errors.New("!Sub list form needs [string, variables]")
		}
		format, vars = deref(arg.Content[0]), deref(arg.Content[1])
	}
	if format.Kind != yaml.ScalarNode {
		return nil, errors.New("!Sub needs a string")
	}
	var firstErr error
	out := subVar.ReplaceAllStringFunc(format.Value, func(m string) string {
		name := m[2 : len(m)-1]
		if strings.HasPrefix(name, "!") { // ${!Literal}
			return "${" + name[1:] + "}"
		}
		if v := get(vars, name); v != nil {
			r, err := t.resolve(v)
			if err != nil && firstErr == nil {
				firstErr = err
			}
			return toString(r)
		}
		if v, ok := t.Param(name); ok {
			return v
		}
		if firstErr == nil {
			firstErr = fmt.Errorf("%w: ${%s}", ErrUnresolved, name)
		}
		return m
	})
	if firstErr != nil {
		return nil, firstErr
	}
	return out, nil
}

func (t *Template) condition(name string, depth int) (bool, error) {
	if depth > 32 {
		return false, fmt.Errorf("condition %q: too deeply nested", name)
	}
	c, ok := t.conds[name]
	if !ok {
		return false, fmt.Errorf("no condition %q", name)
	}
	return t.evalCond(c, depth+1)
}

func (t *Template) evalCond(n *yaml.Node, depth int) (bool, error) {
	fn, arg, ok := intrinsic(n)
	if !ok {
		return false, errors.New("condition is not a condition function")
	}
	switch fn {
	case "Condition":
		return t.condition(arg.Value, depth)
	case "Fn::Equals":
		if arg.Kind != yaml.SequenceNode || len(arg.Content) != 2 {
			return false, errors.New("!Equals needs two values")
		}
		a, err := t.resolve(arg.Content[0])
		if err != nil {
			return false, err
		}
		b, err := t.resolve(arg.Content[1])
		if err != nil {
			return false, err
		}
		return toString(a) == toString(b), nil
	case "Fn::Not", "Fn::And", "Fn::Or":
		if arg.Kind != yaml.SequenceNode || len(arg.Content) == 0 {
			return false, fmt.Errorf("%s needs a list of conditions", fn)
		}
		var vals []bool
		for _, c := range arg.Content {
			v, err := t.evalCond(c, depth)
			if err != nil {
				return false, err
			}
			vals = append(vals, v)
		}
		switch fn {
		case "Fn::Not":
			return !vals[0], nil
		case "Fn::And":
			return !slices.Contains(vals, false), nil
		default:
			return slices.Contains(vals, true), nil
		}
	}
	return false, fmt.Errorf("%w: condition uses %s", ErrUnresolved, fn)
}

// ---------------------------------------------------------------- yaml.Node helpers

func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// get returns the value for key in mapping m, or nil.
func get(m *yaml.Node, key string) *yaml.Node {
	m = deref(m)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return deref(m.Content[i+1])
		}
	}
	return nil
}

// pairs iterates a mapping's keys and values (nothing for a nil or non-mapping node).
func pairs(m *yaml.Node) func(yield func(string, *yaml.Node) bool) {
	return func(yield func(string, *yaml.Node) bool) {
		m = deref(m)
		if m == nil || m.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(m.Content); i += 2 {
			if !yield(m.Content[i].Value, deref(m.Content[i+1])) {
				return
			}
		}
	}
}

func items(n *yaml.Node) []*yaml.Node {
	n = deref(n)
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	return n.Content
}

func scalar(n *yaml.Node) string {
	n = deref(n)
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

func toString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case []any:
		return strings.Join(toStrings(x), ",")
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func toStrings(v any) []string {
	switch x := v.(type) {
	case []any:
		out := make([]string, len(x))
		for i, e := range x {
			out[i] = toString(e)
		}
		return out
	case string:
		if x == "" {
			return nil
		}
		return strings.Split(x, ",")
	case nil:
		return nil
	}
	return []string{toString(v)}
}

// Attributes returns the queue's settings as SQS CreateQueue attributes, for creating the same
// queue locally (moto_server, LocalStack). dlqARN is the ARN of the queue named by DLQ; it is
// ignored when the queue has no redrive policy. Encryption is left to the emulator.
func (q QueueSpec) Attributes(dlqARN string) map[string]string {
	a := map[string]string{
		"DelaySeconds":           strconv.Itoa(q.DelaySeconds),
		"VisibilityTimeout":      strconv.Itoa(q.VisibilityTimeout),
		"MessageRetentionPeriod": strconv.Itoa(q.MessageRetentionPeriod),
	}
	if q.RedriveMaxReceiveCount > 0 && dlqARN != "" {
		b, _ := json.Marshal(map[string]any{"deadLetterTargetArn": dlqARN, "maxReceiveCount": q.RedriveMaxReceiveCount})
		a["RedrivePolicy"] = string(b)
	}
	return a
}

// SAMLocalEnv is the environment `sam local invoke --env-vars envFile` gives the function
// logicalID: the variables the template declares for it (a Ref to a resource becomes the
// resource's logical id, as SAM CLI resolves it; what SAM cannot resolve locally is empty),
// overridden by envFile's "Parameters" section and then by its section named logicalID, for the
// declared variables only. ignored names the variables envFile sets that SAM ignores because
// the template does not declare them for the function, sorted.
func (t *Template) SAMLocalEnv(logicalID string, envFile map[string]map[string]string) (env map[string]string, ignored []string, err error) {
	local := *t
	local.refsAsIDs = true
	f, err := local.Function(logicalID)
	if err != nil {
		return nil, nil, err
	}
	env = maps.Clone(f.Env)
	for _, name := range f.EnvUnresolved {
		env[name] = ""
	}
	for _, section := range []string{"Parameters", logicalID} {
		for k, v := range envFile[section] {
			if _, declared := env[k]; !declared {
				if section == logicalID {
					ignored = append(ignored, k)
				}
				continue
			}
			env[k] = v
		}
	}
	slices.Sort(ignored)
	return env, ignored, nil
}
