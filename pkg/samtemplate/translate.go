package samtemplate

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// ErrNoTranslator: the AWS SAM translator (the Python package samtranslator, which cfn-lint
// installs with itself) is not available.
var ErrNoTranslator = errors.New("samtemplate: the AWS SAM translator (python3 -m samtranslator, installed with cfn-lint) is not available")

//go:embed translate.py
var translateScript string

// Translated is the CloudFormation template the SAM transform makes of template.yaml: what
// CloudFormation deploys (AWS::Lambda::Function, its Version, Alias and EventInvokeConfig, ...).
type Translated struct {
	Parameters map[string]map[string]any `json:"Parameters"`
	Conditions map[string]any            `json:"Conditions"`
	Rules      map[string]any            `json:"Rules"`
	Resources  map[string]Resource       `json:"Resources"`
	Outputs    map[string]map[string]any `json:"Outputs"`
	// Raw is the whole translated document.
	Raw map[string]any `json:"-"`
}

// Resource is one translated resource.
type Resource struct {
	Type       string         `json:"Type"`
	Condition  string         `json:"Condition"`
	DependsOn  any            `json:"DependsOn"`
	Properties map[string]any `json:"Properties"`
}

// OfType returns the logical ids of the resources of type typ.
func (t *Translated) OfType(typ string) []string {
	var ids []string
	for id, r := range t.Resources {
		if r.Type == typ {
			ids = append(ids, id)
		}
	}
	return ids
}

// Python is the interpreter Translate runs ($SAM_PYTHON, else python3).
func Python() string {
	if p := os.Getenv("SAM_PYTHON"); p != "" {
		return p
	}
	return "python3"
}

// Translate runs the AWS SAM transform over the template at path, offline, as `sam deploy`'s
// CloudFormation would (the functions' CodeUri replaced by an S3 location, as `sam package`
// does). It needs python3 with samtranslator; without it the error is ErrNoTranslator.
func Translate(ctx context.Context, path string) (*Translated, error) {
	py, err := exec.LookPath(Python())
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoTranslator, err)
	}
	cmd := exec.CommandContext(ctx, py, "-c", translateScript, path)
	cmd.Env = append(os.Environ(), "AWS_DEFAULT_REGION=eu-west-1")
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		if strings.Contains(stderr.String(), "No module named 'samtranslator'") {
			return nil, fmt.Errorf("%w: %s", ErrNoTranslator, strings.TrimSpace(stderr.String()))
		}
		return nil, fmt.Errorf("samtemplate: translate %s: %v: %s", path, err, strings.TrimSpace(stderr.String()))
	}
	var t Translated
	if err := json.Unmarshal(out.Bytes(), &t); err != nil {
		return nil, fmt.Errorf("samtemplate: translated template: %w", err)
	}
	if err := json.Unmarshal(out.Bytes(), &t.Raw); err != nil {
		return nil, fmt.Errorf("samtemplate: translated template: %w", err)
	}
	return &t, nil
}
