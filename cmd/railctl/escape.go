package main

import (
	"fmt"
	"io"
	"unicode"
	"unicode/utf8"
)

// Names are data: everything railctl prints (document names, page text,
// model fields, errors quoting them) goes through one escaping writer, so
// that a file name or a model's answer cannot clear the screen, set the
// window title, recolour the terminal or reorder a line. Line feeds and
// tabs pass (railctl's own layout); every other control character, and
// the Unicode bidirectional overrides, print as \u escapes (\u001b,
// \u202e; valid in JSON strings too); a byte that is not UTF-8 prints as
// \xff.

// escapeText returns s with the characters an escapingWriter escapes
// written as escapes.
func escapeText(s string) string {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if mustEscape(r) || (r == utf8.RuneError && n == 1) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	b := []byte(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b = append(b, `\x`...)
			b = append(b, "0123456789abcdef"[s[i]>>4], "0123456789abcdef"[s[i]&15])
		case mustEscape(r):
			// \uXXXX: readable, and also a valid escape inside a JSON
			// string, so --json output stays valid JSON.
			b = append(b, `\u`...)
			b = append(b, fmt.Sprintf("%04x", r)...)
		default:
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return string(b)
}

func mustEscape(r rune) bool {
	if r == '\n' || r == '\t' {
		return false
	}
	if unicode.IsControl(r) {
		return true
	}
	switch {
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069, r == 0x200E, r == 0x200F, r == 0x061C:
		return true
	}
	return false
}

// escapingWriter escapes what it writes (escapeText). A write may end in
// the middle of a UTF-8 sequence; the tail waits for the next write.
type escapingWriter struct {
	w    io.Writer
	tail []byte
}

func newEscapingWriter(w io.Writer) io.Writer {
	if _, ok := w.(*escapingWriter); ok {
		return w
	}
	return &escapingWriter{w: w}
}

func (e *escapingWriter) Write(p []byte) (int, error) {
	data := append(e.tail, p...)
	cut := len(data)
	// Keep an incomplete UTF-8 sequence at the end for the next write.
	for k := 1; k <= 3 && k <= len(data); k++ {
		c := data[len(data)-k]
		if c < 0x80 {
			break
		}
		if c >= 0xC0 {
			if !utf8.FullRune(data[len(data)-k:]) {
				cut = len(data) - k
			}
			break
		}
	}
	e.tail = append([]byte(nil), data[cut:]...)
	if _, err := io.WriteString(e.w, escapeText(string(data[:cut]))); err != nil {
		return 0, err
	}
	return len(p), nil
}
