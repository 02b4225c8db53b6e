package rail

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// ErrBodyNotStorable: a frame body the ledger would refuse to store
// (PostgreSQL's jsonb), though it may be valid JSON. A build that returns
// one fails like any other build (recorded with its backoff); the commit is
// never tried.
var ErrBodyNotStorable = errors.New("frame body cannot be stored as jsonb")

// ErrCommitRefused: the database answered a commit with an error, so the
// statement (and with it the frame, the fence and the run's outcome) did
// not commit. Unlike a lost connection this is not ambiguous: the worker
// records the failure with its backoff. The ledger wraps the database's
// own error with it.
var ErrCommitRefused = errors.New("commit refused by the database; nothing landed")

// The limits of PostgreSQL's jsonb (and its numeric, which stores every
// JSON number) that CheckStorable applies.
const (
	// maxJSONBBytes: jsonb cannot hold a value (string or container) of
	// 2^28 bytes or more.
	maxJSONBBytes = 1<<28 - 1
	// maxNumericScale: digits after the decimal point a numeric can keep
	// (its display scale is 14 bits).
	maxNumericScale = 16383
	// maxNumericWeight: a numeric's weight is in base-10000 digits and
	// 16 bits wide, so its most significant decimal digit may sit at
	// most at 10^131071.
	maxNumericExp10 = 4*32767 + 3
	// maxNumericExponent: numeric's parser refuses an exponent of
	// INT_MAX/2 or more either way, whatever the digits.
	maxNumericExponent = (1<<31-1)/2 - 1
)

// CheckStorable reports whether body can be stored as the ledger stores a
// frame (PostgreSQL jsonb, UTF-8 database): valid UTF-8 and valid JSON
// (what json.Valid checks), and, beyond that, no \u0000 escape, no
// unpaired UTF-16 surrogate escape, every number within numeric's range
// and scale, and under jsonb's size limit. The error wraps
// ErrBodyNotStorable and says what and where (classes, byte offsets and
// lengths: never the body's text, so it is a SafeMessager and reaches
// last_error whole).
func CheckStorable(body []byte) error {
	if err := checkStorable(body); err != nil {
		return notStorable{err}
	}
	return nil
}

// notStorable is CheckStorable's error: its text is the rail's own.
type notStorable struct{ err error }

func (e notStorable) Error() string       { return e.err.Error() }
func (e notStorable) Unwrap() error       { return e.err }
func (e notStorable) SafeMessage() string { return e.err.Error() }

func checkStorable(body []byte) error {
	if !utf8.Valid(body) {
		return fmt.Errorf("%w: not valid UTF-8", ErrBodyNotStorable)
	}
	if !json.Valid(body) {
		return fmt.Errorf("%w: not valid JSON", ErrBodyNotStorable)
	}
	if len(body) > maxJSONBBytes {
		return fmt.Errorf("%w: %d bytes, more than jsonb holds", ErrBodyNotStorable, len(body))
	}
	for i := 0; i < len(body); {
		var err error
		switch c := body[i]; {
		case c == '"':
			i, err = checkString(body, i)
		case c == '-' || ('0' <= c && c <= '9'):
			i, err = checkNumber(body, i)
		default:
			i++
		}
		if err != nil {
			return fmt.Errorf("%w: %w", ErrBodyNotStorable, err)
		}
	}
	return nil
}

// checkString checks the string literal that opens at body[i] (valid JSON)
// and returns the index just past it.
func checkString(body []byte, i int) (int, error) {
	for j := i + 1; j < len(body); {
		switch body[j] {
		case '"':
			return j + 1, nil
		case '\\':
			if body[j+1] != 'u' {
				j += 2
				continue
			}
			r := hex4(body[j+2 : j+6])
			switch {
			case r == 0:
				return 0, fmt.Errorf(`\u0000 in the string at byte %d (jsonb cannot store a NUL)`, i)
			case 0xD800 <= r && r <= 0xDBFF:
				if j+12 > len(body) || body[j+6] != '\\' || body[j+7] != 'u' {
					return 0, fmt.Errorf(`unpaired high surrogate \u%04x in the string at byte %d`, r, i)
				}
				if lo := hex4(body[j+8 : j+12]); lo < 0xDC00 || lo > 0xDFFF {
					return 0, fmt.Errorf(`high surrogate \u%04x not followed by a low one in the string at byte %d`, r, i)
				}
				j += 12
			case 0xDC00 <= r && r <= 0xDFFF:
				return 0, fmt.Errorf(`unpaired low surrogate \u%04x in the string at byte %d`, r, i)
			default:
				j += 6
			}
		default:
			j++
		}
	}
	return len(body), nil // unreachable for valid JSON
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b {
		r <<= 4
		switch {
		case '0' <= c && c <= '9':
			r |= rune(c - '0')
		case 'a' <= c && c <= 'f':
			r |= rune(c-'a') + 10
		case 'A' <= c && c <= 'F':
			r |= rune(c-'A') + 10
		}
	}
	return r
}

// checkNumber checks the number that starts at body[i] (valid JSON)
// against numeric's limits, as PostgreSQL's numeric input applies them,
// and returns the index just past it.
func checkNumber(body []byte, i int) (int, error) {
	start := i
	if body[i] == '-' {
		i++
	}
	digits := func() (from, to int) {
		from = i
		for i < len(body) && '0' <= body[i] && body[i] <= '9' {
			i++
		}
		return from, i
	}
	intFrom, intTo := digits()
	fracFrom, fracTo := i, i
	if i < len(body) && body[i] == '.' {
		i++
		fracFrom, fracTo = digits()
	}
	var exp int64
	if i < len(body) && (body[i] == 'e' || body[i] == 'E') {
		i++
		neg := false
		if body[i] == '+' || body[i] == '-' {
			neg = body[i] == '-'
			i++
		}
		from, to := digits()
		for _, c := range body[from:to] {
			if exp <= maxNumericExponent { // saturate: anything larger is refused anyway
				exp = exp*10 + int64(c-'0')
			}
		}
		if neg {
			exp = -exp
		}
	}
	num := string(body[start:i])
	if exp > maxNumericExponent || exp < -maxNumericExponent {
		return 0, fmt.Errorf("number of %d characters at byte %d: exponent out of numeric's range", len(num), start)
	}
	if scale := int64(fracTo-fracFrom) - exp; scale > maxNumericScale {
		return 0, fmt.Errorf("number of %d characters at byte %d: %d digits after the decimal point, numeric keeps at most %d",
			len(num), start, scale, maxNumericScale)
	}
	// The most significant nonzero digit's power of ten.
	msd, nonzero := int64(0), false
	for k := intFrom; k < intTo; k++ {
		if body[k] != '0' {
			msd, nonzero = int64(intTo-k-1), true
			break
		}
	}
	if !nonzero {
		for k := fracFrom; k < fracTo; k++ {
			if body[k] != '0' {
				msd, nonzero = -int64(k-fracFrom+1), true
				break
			}
		}
	}
	if nonzero && msd+exp > maxNumericExp10 {
		return 0, fmt.Errorf("number of %d characters at byte %d: larger than numeric holds (10^%d and above)", len(num), start, maxNumericExp10+1)
	}
	return i, nil
}
