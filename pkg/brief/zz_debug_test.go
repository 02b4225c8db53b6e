package brief

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestZZDebugCaption(t *testing.T) {
	f := os.Getenv("CAPFILE")
	if f == "" {
		t.Skip()
	}
	raw, _ := os.ReadFile(f)
	pages := strings.Split(string(raw), "\n\f\n")
	for _, p := range strings.Split(pages[0], "\n")[:min(40, len(strings.Split(pages[0], "\n")))] {
		q, had := prepCaptionLine(p)
		fmt.Printf("%d %v %q\n", classify(q), had, q)
	}
}
