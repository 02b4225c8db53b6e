package main

import (
	"bytes"
	"encoding/json"
	"testing"
)

// What railctl prints from documents, names and model fields cannot drive
// the terminal: control characters and bidi overrides print as escapes,
// also when a write splits a UTF-8 sequence; line feeds, tabs and other
// text pass unchanged.
func TestEscapingWriter(t *testing.T) {
	var b bytes.Buffer
	w := newEscapingWriter(&b)
	parts := []string{"BRIEF  \x1b[2J\x1b]0;title\x07Harlow", " v. Pen\xe2", "\x80\x94mark\u202e\n", "\tok é\xff\u009b\n", "bad \xff byte\n"}
	for _, p := range parts {
		if _, err := w.Write([]byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	want := "BRIEF  \\u001b[2J\\u001b]0;title\\u0007Harlow v. Pen\u2014mark\\u202e\n\tok é\\xff\\u009b\n" + "bad \\xff byte\n"
	if got := b.String(); got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	if newEscapingWriter(w) != w {
		t.Error("an escaping writer wrapped twice")
	}
}

// JSON output stays valid JSON with the same strings: the escapes are
// JSON escapes.
func TestEscapingWriterKeepsJSON(t *testing.T) {
	in := map[string]string{"name": "exhibit\u202egpj.pdf\x7f", "text": "x\u0085y"}
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if _, err := newEscapingWriter(&b).Write(raw); err != nil {
		t.Fatal(err)
	}
	if bytes.ContainsRune(b.Bytes(), '\u202e') || bytes.ContainsRune(b.Bytes(), 0x7f) {
		t.Fatalf("not escaped: %q", b.String())
	}
	var out map[string]string
	if err := json.Unmarshal(b.Bytes(), &out); err != nil || out["name"] != in["name"] || out["text"] != in["text"] {
		t.Fatalf("escaped JSON %q: %v, %q", b.String(), err, out)
	}
}
