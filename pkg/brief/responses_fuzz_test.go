package brief_test

import (
	"context"
	"testing"

	"github.com/pramaan/brief-rail/pkg/brief"
)

// FuzzResponses builds the Brief of a complaint and an answer of any
// text: the pairing never panics, and the Brief it makes validates.
func FuzzResponses(f *testing.F) {
	f.Add(writtenComplaint, pleadingCaption+"ANSWER\n1. Admitted.\n2-3. Denied.\nCOMPLAINT ¶ 4: x\nANSWER:\nAS TO PARAGRAPH 5:\nDenied.\n")
	f.Add("COMPLAINT\nFIRST COUNT\n1.\n\f1 2 3\n(1) A;\nWHEREFORE\nSECOND COUNT\n1. x", "ANSWER\nFIRST DEFENSE\n1. y,1 z\n1 Note.\nDEFENDANT'S ANSWER - 1\n\fDEFENDANT'S ANSWER - 2\n¶")
	f.Fuzz(func(t *testing.T, complaint, answer string) {
		in := written(t, complaint, answer)
		b, err := brief.NewExtractive().Build(context.Background(), in)
		if err != nil {
			return // refused input is fine; a panic is not
		}
		if err := b.Validate(); err != nil {
			t.Fatalf("invalid Brief: %v", err)
		}
	})
}
