package main

import (
	"bytes"
	"testing"
)

// What railctl prints from documents, names and model fields cannot drive
// the terminal: control characters and bidi overrides print as escapes,
// also when a write splits a UTF-8 sequence; line feeds, tabs and other
// text pass unchanged.
func TestEscapingWriter(t *testing.T) {
	var b bytes.Buffer
	w := newEscapingWriter(&b)
	parts := []string{"BRIEF  \x1b[2J\x1b]0;title\x07Harlow", " v. Pen\xe2", "\x80\x94mark\u202e\n", "\tok é\x9b\n", "bad \xff byte\n"}
	for _, p := range parts {
		if _, err := w.Write([]byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	want := "BRIEF  \\x1b[2J\\x1b]0;title\\aHarlow v. Pen\u2014mark\\u202e\n\tok é\\x9b\n" + "bad \\xff byte\n"
	if got := b.String(); got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	if newEscapingWriter(w) != w {
		t.Error("an escaping writer wrapped twice")
	}
}
