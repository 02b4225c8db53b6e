package rail_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pramaan/brief-rail/pkg/rail"
)

type vouched struct{}

func (vouched) Error() string       { return "model said: PRIVILEGED text" }
func (vouched) SafeMessage() string { return "model reply not JSON (1834 bytes)" }

// SafeText records ids, lengths and classes: a builder's own text only when
// it vouches for it (SafeMessager); the rail's sentinels by their text.
func TestSafeTextWithholdsBuilderText(t *testing.T) {
	secret := errors.New("cannot parse: PRIVILEGED AND CONFIDENTIAL settle at 2.1m")
	for _, c := range []struct {
		err       error
		want, not string
	}{
		{&rail.BuildError{Builder: "bedrock/v1", Err: secret}, "build with bedrock/v1: ", "PRIVILEGED"},
		{&rail.BuildError{Builder: "b", Err: fmt.Errorf("wrapped: %w", vouched{})}, "model reply not JSON (1834 bytes)", "PRIVILEGED"},
		{&rail.BuildError{Builder: "b", Err: fmt.Errorf("model call: %w", context.DeadlineExceeded)}, "context deadline exceeded", "model call"},
		{fmt.Errorf("document 42: %w", rail.ErrInputsChanged), rail.ErrInputsChanged.Error(), ""},
		{secret, "byte message withheld", "PRIVILEGED"},
	} {
		got := rail.SafeText(c.err)
		if !strings.Contains(got, c.want) || (c.not != "" && strings.Contains(got, c.not)) {
			t.Errorf("SafeText(%q) = %q: want %q, never %q", c.err.Error(), got, c.want, c.not)
		}
		if len(got) > rail.MaxSafeText+len("…") {
			t.Errorf("SafeText %d bytes, over the bound", len(got))
		}
	}
	be := &rail.BuildError{Builder: "b", Err: secret}
	if strings.Contains(be.Error(), "PRIVILEGED") || !errors.Is(rail.Safe(be), secret) {
		t.Errorf("BuildError.Error %q must withhold the text and keep the chain", be.Error())
	}
	if rail.Safe(nil) != nil || rail.SafeText(nil) != "" {
		t.Error("nil must stay nil")
	}
}
