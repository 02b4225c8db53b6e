package railtest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// recordingTB keeps what the tracer reports instead of failing the test.
type recordingTB struct {
	testing.TB
	errs []string
}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// The guard every test pool carries refuses a statement RDS Proxy would
// pin by its size and a client timestamp, and passes the rail's own
// statements' sizes.
func TestTracerRefusesPinningSizesAndClientTimes(t *testing.T) {
	for _, c := range []struct {
		name string
		data pgx.TraceQueryStartData
		want string
	}{
		{"a small statement", pgx.TraceQueryStartData{SQL: "SELECT 1"}, ""},
		{"16 KB exactly", pgx.TraceQueryStartData{SQL: "SELECT 1 " + strings.Repeat(" ", MaxStatementBytes-9)}, ""},
		{"a byte over 16 KB", pgx.TraceQueryStartData{SQL: "SELECT 1 " + strings.Repeat(" ", MaxStatementBytes-8)}, "RDS Proxy pins"},
		{"a client timestamp", pgx.TraceQueryStartData{SQL: "SELECT $1", Args: []any{time.Now()}}, "client timestamp"},
	} {
		r := &recordingTB{TB: t}
		(&NoClientTime{T: r}).TraceQueryStart(context.Background(), nil, c.data)
		got := strings.Join(r.errs, "; ")
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%s: reported %q, want %q", c.name, got, c.want)
		}
	}
}
