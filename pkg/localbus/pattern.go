package localbus

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Pattern is a compiled EventBridge event pattern. It implements the subset
// the rail's template uses, exactly: a JSON object whose keys name event
// fields; a value that is an array matches when the event's field (or any
// element of it, when the field is an array) equals one of its scalar
// elements; a value that is an object matches the nested object (detail's
// keys). Content filters (objects inside an array: prefix, anything-but,
// numeric, exists, ...) and any other shape are refused at compile time, so
// an unsupported pattern is an error, never a silent match.
type Pattern struct {
	fields map[string]matcher
}

type matcher struct {
	values []any               // exact-match list (json.Number, string, bool, nil)
	nested map[string]*Pattern // for an object value
	sub    *Pattern
}

// CompilePattern parses and checks a pattern.
func CompilePattern(raw []byte) (*Pattern, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("localbus: event pattern is not JSON: %w", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("localbus: event pattern must be a JSON object, got %s", raw)
	}
	return compileObject(obj, "")
}

func compileObject(obj map[string]any, path string) (*Pattern, error) {
	if len(obj) == 0 {
		return nil, fmt.Errorf("localbus: event pattern %s is an empty object", orRoot(path))
	}
	p := &Pattern{fields: map[string]matcher{}}
	for k, v := range obj {
		where := path + "." + k
		switch val := v.(type) {
		case []any:
			if len(val) == 0 {
				return nil, fmt.Errorf("localbus: event pattern %s: an empty array matches nothing", where)
			}
			for _, e := range val {
				switch e.(type) {
				case string, json.Number, bool, nil:
				case map[string]any:
					return nil, fmt.Errorf("localbus: event pattern %s: content filter %s is not supported (only exact-match lists)",
						where, keys(e.(map[string]any)))
				default:
					return nil, fmt.Errorf("localbus: event pattern %s: nested array is not a valid matcher", where)
				}
			}
			p.fields[k] = matcher{values: val}
		case map[string]any:
			sub, err := compileObject(val, where)
			if err != nil {
				return nil, err
			}
			p.fields[k] = matcher{sub: sub}
		default:
			return nil, fmt.Errorf("localbus: event pattern %s: value must be an array or an object, got %v", where, v)
		}
	}
	return p, nil
}

func orRoot(path string) string {
	if path == "" {
		return "(root)"
	}
	return path
}

func keys(m map[string]any) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return "{" + strings.Join(ks, ",") + "}"
}

// Match reports whether an event (decoded with json.Decoder.UseNumber, or
// built from strings and maps) matches the pattern.
func (p *Pattern) Match(event map[string]any) bool {
	for k, m := range p.fields {
		v, ok := event[k]
		if !ok {
			return false
		}
		if m.sub != nil {
			obj, ok := v.(map[string]any)
			if !ok || !m.sub.Match(obj) {
				return false
			}
			continue
		}
		if !m.matches(v) {
			return false
		}
	}
	return true
}

func (m matcher) matches(v any) bool {
	if arr, ok := v.([]any); ok {
		for _, e := range arr {
			if m.matches(e) {
				return true
			}
		}
		return false
	}
	for _, want := range m.values {
		if scalarEqual(want, v) {
			return true
		}
	}
	return false
}

func scalarEqual(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		fx, ex := x.Float64()
		fy, ey := y.Float64()
		return ex == nil && ey == nil && fx == fy
	}
	return false
}
