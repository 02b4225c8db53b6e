package postgres_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pramaan/brief-rail/pkg/rail"
)

// rail.CheckStorable must say yes exactly when jsonb stores the body: the
// worker checks a build's body with it before the commit (a body jsonb
// refuses is a build failure, not a commit the database refuses for the
// whole lease). Checked against the database itself, on the edges (NUL
// and surrogate escapes, numeric's range and scale, invalid UTF-8) and on
// seeded random bodies made of them.
func TestCheckStorableAgreesWithJSONB(t *testing.T) {
	b := setup(t, rail.Config{})
	stores := func(body string) (bool, error) {
		var ok bool
		err := b.pool.QueryRow(b.ctx, `SELECT $1::text::jsonb IS NOT NULL`, body).Scan(&ok)
		if err != nil && strings.Contains(err.Error(), "SQLSTATE 22") { // data exceptions: jsonb refused it
			return false, nil
		}
		return ok, err
	}
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	cases := []string{
		`{"brief":"ok"}`, `"a\u0000b"`, `{"\u0000":1}`, `"\\u0000"`, `"\u0001"`,
		`"\ud800"`, `"\udc00"`, `"\ud800x"`, `"\ud800\u0041"`, `"\ud800\udc00"`, `"\ud800\ud800"`, `"\uDBFF\uDFFF"`, `"\ud800\n"`,
		`1e131071`, `1e131072`, `-1e131071`, `1.5e131071`, `15e131071`, `0.001e131074`, `0.001e131075`,
		`1e-16383`, `1e-16384`, `0.5e-16383`, `123456789e-16390`, `1e-0016383`, `1E+3`, `-0.000e+5`,
		`0e999999999`, `0.0e-99999`, `0.00000e16388`, `1e1000000000`, `0e1073741822`, `0e1073741823`, `0e-1073741822`, `0e-1073741823`,
		`0e99999999999999999999`, `1e-2147483647`, `1e2147483647`, `0e-2147483648`,
		"\"\xff\"", "\"\xed\xa0\x80\"", `"é ✓ 𝄞"`, deep(10000), `[1,2,"x",{"a":null,"b":true}]`,
		`0.` + strings.Repeat("0", 16382) + `1`, `0.` + strings.Repeat("0", 16383) + `1`, `0.` + strings.Repeat("1", 16383),
	}
	rng := rand.New(rand.NewPCG(18, 5))
	for range 400 {
		cases = append(cases, randomBody(rng))
	}
	for _, body := range cases {
		want, err := stores(body)
		if err != nil {
			t.Fatalf("%.60q: %v", body, err)
		}
		got := rail.CheckStorable([]byte(body))
		if (got == nil) != want {
			t.Errorf("%.80q: CheckStorable = %v, jsonb stores it: %v", body, got, want)
		}
		if got != nil && !errors.Is(got, rail.ErrBodyNotStorable) {
			t.Errorf("%.60q: error %v does not wrap ErrBodyNotStorable", body, got)
		}
	}
}

// randomBody is a JSON array of strings and numbers made from the edges
// jsonb and numeric have.
func randomBody(rng *rand.Rand) string {
	escapes := []string{`a`, `\u0000`, `\ud800`, `\udc00`, `\ud800\udc00`, `\u0041`, `é`, `\n`, `\\u0000`, `\"`, `\uDBFF`, `\uDFFF`}
	fracs := []int{0, 1, 3, 16380, 16383, 16384}
	exps := []string{"", "e0", "e1", "e-1", "E+5", "e131071", "e131072", "e131070", "e-16383", "e-16384", "e-16380",
		"e1073741822", "e1073741823", "e-1073741822", "e-1073741823", "e999999999999"}
	ints := []string{"0", "1", "9", "10", "12345", "100"}
	n := 1 + rng.IntN(4)
	parts := make([]string, n)
	for i := range parts {
		if rng.IntN(2) == 0 {
			var s strings.Builder
			s.WriteByte('"')
			for range 1 + rng.IntN(3) {
				s.WriteString(escapes[rng.IntN(len(escapes))])
			}
			s.WriteByte('"')
			parts[i] = s.String()
			continue
		}
		num := ints[rng.IntN(len(ints))]
		if rng.IntN(3) == 0 {
			num = "-" + num
		}
		if f := fracs[rng.IntN(len(fracs))]; f > 0 {
			d := strings.Repeat("0", f-1) + fmt.Sprint(rng.IntN(10))
			num += "." + d
		}
		parts[i] = num + exps[rng.IntN(len(exps))]
	}
	return "[" + strings.Join(parts, ",") + "]"
}
