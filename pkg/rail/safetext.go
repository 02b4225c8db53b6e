package rail

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"
)

// A build's errors reach places many people read: the builder's logs, the
// ledger's last_error and the run's error (printed by railctl status, runs,
// why and stale, for every firm). A builder's error may quote a document or
// a model's reply, so the rail records what it can vouch for: ids, lengths
// and error classes. A builder opts its own errors in by implementing
// SafeMessager.

// SafeMessager is an error whose SafeMessage carries no document or model
// text (ids, counts, lengths, classes only): the rail records it as is.
type SafeMessager interface {
	SafeMessage() string
}

// MaxSafeText bounds the text SafeText returns.
const MaxSafeText = 500

// railErrors are the protocol's own errors, whose texts the rail wrote.
var railErrors = []error{ErrInputsChanged, ErrFenced, ErrSuperseded, ErrUnknownMatter, ErrFirmMismatch,
	ErrMatterClosed, ErrBodyNotStorable, ErrCommitRefused, context.DeadlineExceeded, context.Canceled}

// SafeText is err as the rail records and logs it: the SafeMessage of the
// first SafeMessager in its chain; else, for the rail's own errors (the
// fence, changed inputs, a deadline), their sentinel's text; else the
// error's class and the length of the message withheld. Bounded by
// MaxSafeText.
func SafeText(err error) string {
	if err == nil {
		return ""
	}
	var s string
	var be *BuildError
	var sm SafeMessager
	switch {
	case errors.As(err, &be):
		s = "build with " + be.Builder + ": " + SafeText(be.Err)
	case errors.As(err, &sm):
		s = sm.SafeMessage()
	default:
		for _, r := range railErrors {
			if errors.Is(err, r) {
				s = r.Error()
				break
			}
		}
		if s == "" {
			s = fmt.Sprintf("%s (%d-byte message withheld: it may quote a document or the model)", errorClass(err), len(err.Error()))
		}
	}
	return bound(s, MaxSafeText)
}

// errorClass names err's type, looking through the standard library's
// plain wrappers to the first typed error.
func errorClass(err error) string {
	for e := err; e != nil; e = errors.Unwrap(e) {
		switch t := fmt.Sprintf("%T", e); t {
		case "*fmt.wrapError", "*fmt.wrapErrors", "*errors.errorString":
			continue
		default:
			return t
		}
	}
	return "error"
}

func bound(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}

// BuildError is a FrameBuilder's error, wrapped by the worker with the
// builder's name. Its Error is SafeText's: the builder's own text is kept
// only in the wrapped error (errors.Is and errors.As see it).
type BuildError struct {
	Builder string
	Err     error
}

func (e *BuildError) Error() string { return SafeText(e) }
func (e *BuildError) Unwrap() error { return e.Err }

// safeError carries SafeText(err) as its text and err in its chain.
type safeError struct{ err error }

func (e safeError) Error() string { return SafeText(e.err) }
func (e safeError) Unwrap() error { return e.err }

// Safe returns err with SafeText as its Error (nil for nil); errors.Is and
// errors.As still see err's chain.
func Safe(err error) error {
	if err == nil {
		return nil
	}
	return safeError{err}
}
