// Bounds on the work of reading one file (added in brief-rail's copy; see
// HARDENING.md).

package pdf

import (
	"context"
	"errors"
	"fmt"
)

// ErrWorkLimit is the cause of a StopError when a Reader has done its
// budget of work.
var ErrWorkLimit = errors.New("pdf: work limit reached")

// ErrDecodedLimit is the cause of a StopError when a Reader's filters have
// decoded their budget of bytes.
var ErrDecodedLimit = errors.New("pdf: decoded-bytes limit reached")

// StopError is panicked (and, from NewReaderContext, returned) when a
// Reader's context ends or its work budget is spent. Err is ErrWorkLimit
// or the context's error. A caller that recovers panics from Value
// accessors or Interpret must treat it as the end of the whole document,
// not of one object.
type StopError struct {
	Err  error
	Work int64 // the budget, in units of work (in bytes for ErrDecodedLimit)
}

func (e *StopError) Error() string {
	if errors.Is(e.Err, ErrWorkLimit) {
		return fmt.Sprintf("pdf: more than %d units of work (tokens, lookups, object-stream entries)", e.Work)
	}
	if errors.Is(e.Err, ErrDecodedLimit) {
		return fmt.Sprintf("pdf: more than %d bytes decoded by stream filters", e.Work)
	}
	return "pdf: stopped: " + e.Err.Error()
}

func (e *StopError) Unwrap() error { return e.Err }

// DefaultWork is the work budget of a Reader opened without one. Real
// court filings cost 3,000 to 11,000 units a page; a 2,000-page filing at
// twice the costliest rate stays under it.
const DefaultWork = 48 << 20

// DefaultDecoded is the bytes a Reader's stream filters may decode, in all
// (every stage of every stream, read as often as it is read), unless
// SetDecodedLimit changes it.
const DefaultDecoded = 1 << 30

// guard counts the work of one Reader where it is done (tokens read,
// buffers refilled, objects resolved, dictionary-stack lookups,
// cross-reference entries) and checks the context every 1,024 units.
type guard struct {
	ctx   context.Context
	left  int64
	max   int64
	since int64
	// decodedLeft and decodedMax are the decoded-bytes budget; decodedSince
	// counts the bytes since the context was last checked.
	decodedLeft, decodedMax, decodedSince int64
}

func newGuard(ctx context.Context, work int64) *guard {
	if ctx == nil {
		ctx = context.Background()
	}
	if work <= 0 {
		work = DefaultWork
	}
	return &guard{ctx: ctx, left: work, max: work, decodedLeft: DefaultDecoded, decodedMax: DefaultDecoded}
}

// spend accounts for n units of work; it panics with a *StopError once
// the budget is spent or the context has ended.
func (g *guard) spend(n int64) {
	if g == nil {
		return
	}
	g.left -= n
	g.since += n
	if g.left < 0 {
		panic(&StopError{Err: ErrWorkLimit, Work: g.max})
	}
	if g.since >= 1024 {
		g.since = 0
		if err := g.ctx.Err(); err != nil {
			panic(&StopError{Err: err, Work: g.max})
		}
	}
}

// decoded accounts for n bytes decoded by a filter; it panics with a
// *StopError once the decoded-bytes budget is spent, and checks the context
// every MiB.
func (g *guard) decoded(n int64) {
	if g == nil {
		return
	}
	g.decodedLeft -= n
	g.decodedSince += n
	if g.decodedLeft < 0 {
		panic(&StopError{Err: ErrDecodedLimit, Work: g.decodedMax})
	}
	if g.decodedSince >= 1<<20 {
		g.decodedSince = 0
		if err := g.ctx.Err(); err != nil {
			panic(&StopError{Err: err, Work: g.max})
		}
	}
}

// Spent is the work the Reader has done so far.
func (r *Reader) Spent() int64 {
	if r.g == nil {
		return 0
	}
	return r.g.max - r.g.left
}

// SetWorkLimit changes the Reader's work budget to total units (counted
// from the start: work already done stays spent), e.g. once the caller
// knows how many pages the document has.
func (r *Reader) SetWorkLimit(total int64) {
	if r.g == nil || total <= 0 {
		return
	}
	r.g.left = total - (r.g.max - r.g.left)
	r.g.max = total
}

// SetDecodedLimit changes the bytes the Reader's stream filters may decode
// to total (counted from the start), DefaultDecoded unless changed.
func (r *Reader) SetDecodedLimit(total int64) {
	if r.g == nil || total <= 0 {
		return
	}
	r.g.decodedLeft = total - (r.g.decodedMax - r.g.decodedLeft)
	r.g.decodedMax = total
}
