package rail

import (
	"strings"
	"testing"
)

// Names are data: a name holding a control character (an escape sequence
// that clears a terminal or sets its title, a bell, a carriage return) or a
// bidirectional override is refused before anything is written.
func TestDocumentNameControlCharacters(t *testing.T) {
	for _, name := range []string{"\x1b[2Jcomplaint.pdf", "title\x1b]0;owned\x07.pdf", "a\rb.pdf", "x\u0085.pdf", "exhibit\u202egpj.pdf", "tab\there.pdf"} {
		err := NewDocument{Name: name, Pages: []string{"text"}}.Validate()
		if err == nil || !strings.Contains(err.Error(), "control character") {
			t.Errorf("%q: err = %v, want a refusal", name, err)
		}
	}
	if err := (NewDocument{Name: "Exhibit A — demand letter (2025).pdf", Pages: []string{"text"}}).Validate(); err != nil {
		t.Errorf("ordinary name refused: %v", err)
	}
}
