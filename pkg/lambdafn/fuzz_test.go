package lambdafn_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/pramaan/brief-rail/pkg/lambdafn"
)

// FuzzDecodeSchedule checks the scheduler payload decoder's properties on
// any input: it never panics; an input it refuses is a typed
// ErrBadScheduleInput and is indeed not a JSON object with string (or
// null) "source" and "task"; an input it accepts is valid JSON, its task is
// the last "task" key's string (keys matched as encoding/json matches them,
// case-insensitively), it round-trips through encoding, and the handlers'
// check agrees: a function accepts the input exactly when its task is empty
// or names that function, so no two functions accept the same named task.
func FuzzDecodeSchedule(f *testing.F) {
	for _, p := range []string{"../../events/relay.json", "../../events/sweeper.json"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		if _, err := lambdafn.DecodeSchedule(b); err != nil {
			f.Fatalf("%s: %v", p, err)
		}
		f.Add(b)
	}
	for _, s := range []string{`{}`, `{"task":1}`, `null`, `[]`, `"relay"`, `{"TASK":"sweeper","task":"relay"}`,
		`{"task":"relay","task":null}`, `{"task":"relay","Task":"sweeper"}`, `{"source":{},"task":"relay"}`, `{"task":"re\u006cay"}`,
		`{"task":"relay"} trailing`, `{"ta\u0073k":"sweeper"}`, "{\"task\":\"\xff\"}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := lambdafn.DecodeSchedule(b)
		want, shapeOK := oracle(b)
		if err != nil {
			if !errors.Is(err, lambdafn.ErrBadScheduleInput) {
				t.Fatalf("%q: untyped error %v", b, err)
			}
			if e != (lambdafn.ScheduleEvent{}) {
				t.Fatalf("%q: refused but returned %+v", b, e)
			}
			if shapeOK {
				t.Fatalf("%q: refused (%v) a JSON object with string fields", b, err)
			}
			return
		}
		if !json.Valid(b) {
			t.Fatalf("%q: accepted invalid JSON as %+v", b, e)
		}
		if shapeOK && e.Task != want {
			t.Fatalf("%q: task %q, want %q", b, e.Task, want)
		}
		enc, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		again, err := lambdafn.DecodeSchedule(enc)
		if err != nil || again != e {
			t.Fatalf("%q: round trip %s -> %+v %v, want %+v", b, enc, again, err, e)
		}
		accepted := 0
		for _, fn := range []string{lambdafn.Relay, lambdafn.Sweeper} {
			ok := e.CheckFor(fn) == nil
			if ok != (e.Task == "" || e.Task == fn) {
				t.Fatalf("%q: %s check says %v for task %q", b, fn, ok, e.Task)
			}
			if ok {
				accepted++
			}
			if !ok && !strings.Contains(e.CheckFor(fn).Error(), "check the schedule's Input") {
				t.Fatalf("%q: %s refusal unclear: %v", b, fn, e.CheckFor(fn))
			}
		}
		if e.Task != "" && accepted > 1 {
			t.Fatalf("%q: task %q accepted by %d functions", b, e.Task, accepted)
		}
	})
}

// oracle reads b token by token, independently of DecodeSchedule: shapeOK
// when b is exactly one JSON object whose keys matching "source" or "task"
// (case-insensitively, as encoding/json matches) hold strings or null;
// task is then the last string such a "task" key held.
func oracle(b []byte) (task string, shapeOK bool) {
	if !json.Valid(b) {
		return "", false
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return "", false
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return "", false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return "", false
		}
		key := k.(string)
		isTask, isSource := strings.EqualFold(key, "task"), strings.EqualFold(key, "source")
		if !isTask && !isSource {
			continue
		}
		var s *string
		if err := json.Unmarshal(v, &s); err != nil {
			return "", false
		}
		if isTask && s != nil {
			task = *s
		}
	}
	return task, true
}
