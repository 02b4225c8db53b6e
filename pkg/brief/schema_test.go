package brief_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/pramaan/brief-rail/pkg/brief"
)

// conform checks v against the subset of JSON Schema that brief.v1.schema.json
// uses, so that the embedded schema and the Go types cannot drift apart.
func conform(root, s map[string]any, v any, path string) []string {
	if ref, ok := s["$ref"].(string); ok {
		def := strings.TrimPrefix(ref, "#/$defs/")
		return conform(root, root["$defs"].(map[string]any)[def].(map[string]any), v, path)
	}
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, path+": "+fmt.Sprintf(format, args...)) }
	if alts, ok := s["oneOf"].([]any); ok {
		matched := 0
		for _, a := range alts {
			if len(conform(root, a.(map[string]any), v, path)) == 0 {
				matched++
			}
		}
		if matched != 1 {
			fail("matches %d of oneOf's %d schemas, want 1", matched, len(alts))
		}
		return errs
	}
	if c, ok := s["const"]; ok && v != c {
		fail("%v is not const %v", v, c)
	}
	if enum, ok := s["enum"].([]any); ok {
		found := false
		for _, e := range enum {
			found = found || e == v
		}
		if !found {
			fail("%v not in %v", v, enum)
		}
	}
	switch s["type"] {
	case "null":
		if v != nil {
			fail("not null")
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			fail("not a boolean")
		}
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			fail("not an object")
			return errs
		}
		props, _ := s["properties"].(map[string]any)
		for _, r := range s["required"].([]any) {
			if _, ok := obj[r.(string)]; !ok {
				fail("missing %s", r)
			}
		}
		for k, val := range obj {
			ps, ok := props[k].(map[string]any)
			if !ok {
				fail("property %s not in schema", k)
				continue
			}
			errs = append(errs, conform(root, ps, val, path+"."+k)...)
		}
	case "array":
		arr, ok := v.([]any)
		if !ok {
			fail("not an array")
			return errs
		}
		if m, ok := s["minItems"].(float64); ok && float64(len(arr)) < m {
			fail("fewer than %v items", m)
		}
		for i, item := range arr {
			errs = append(errs, conform(root, s["items"].(map[string]any), item, fmt.Sprintf("%s[%d]", path, i))...)
		}
	case "string":
		str, ok := v.(string)
		if !ok {
			fail("not a string")
			return errs
		}
		if p, ok := s["pattern"].(string); ok && !regexp.MustCompile(p).MatchString(str) {
			fail("%q does not match %s", str, p)
		}
		if m, ok := s["minLength"].(float64); ok && float64(len(str)) < m {
			fail("shorter than %v", m)
		}
	case "integer":
		n, ok := v.(float64)
		if !ok || n != float64(int64(n)) {
			fail("not an integer")
			return errs
		}
		if m, ok := s["minimum"].(float64); ok && n < m {
			fail("%v below minimum %v", n, m)
		}
	}
	return errs
}

func TestBriefConformsToJSONSchema(t *testing.T) {
	var schema map[string]any
	if err := json.Unmarshal(brief.JSONSchema, &schema); err != nil {
		t.Fatalf("embedded schema: %v", err)
	}
	b, err := brief.NewExtractive().Build(context.Background(), sampleInput(t))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(b)
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	for _, e := range conform(schema, schema, v, "$") {
		t.Error(e)
	}
	// And a negative: the checker does catch drift.
	v.(map[string]any)["extra"] = 1
	delete(v.(map[string]any), "builder")
	if errs := conform(schema, schema, v, "$"); len(errs) != 2 {
		t.Errorf("checker found %v, want 2 errors", errs)
	}
}
