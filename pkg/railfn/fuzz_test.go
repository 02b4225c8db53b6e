package railfn_test

import (
	"os"
	"testing"

	"github.com/pramaan/brief-rail/pkg/railfn"
)

// FuzzDecodeSchedule: the scheduler payload decoder never panics, and the
// sample inputs in events/ decode.
func FuzzDecodeSchedule(f *testing.F) {
	for _, p := range []string{"../../events/relay.json", "../../events/sweeper.json"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		if _, err := railfn.DecodeSchedule(b); err != nil {
			f.Fatalf("%s: %v", p, err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"task":1}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = railfn.DecodeSchedule(b)
	})
}
