package lambdafn_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pramaan/brief-rail/internal/testenv/localpg"
	"github.com/pramaan/brief-rail/pkg/emf"
	"github.com/pramaan/brief-rail/pkg/lambdafn"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
	railsql "github.com/pramaan/brief-rail/sql"
)

// okPublisher accepts every entry (a double of the rail.Publisher port: the
// database is what this test takes away).
type okPublisher struct{ n int }

func (p *okPublisher) Publish(_ context.Context, entries []rail.BusEntry) ([]rail.PublishResult, error) {
	out := make([]rail.PublishResult, len(entries))
	for i, e := range entries {
		out[i].EventID = e.EventID
	}
	p.n += len(entries)
	return out, nil
}

// emitted lists the metric names in the EMF lines of buf.
func emitted(t *testing.T, buf *syncBuffer) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if line == "" {
			continue
		}
		var doc struct {
			AWS struct {
				CloudWatchMetrics []struct {
					Metrics []struct{ Name string }
				}
			} `json:"_aws"`
		}
		if err := json.Unmarshal([]byte(line), &doc); err != nil {
			t.Fatalf("EMF line %q: %v", line, err)
		}
		for _, d := range doc.AWS.CloudWatchMetrics {
			for _, m := range d.Metrics {
				names[m.Name] = true
			}
		}
	}
	return names
}

var outboxGauges = []string{lambdafn.MetricOutboxBacklog, lambdafn.MetricOutboxOldestAgeSeconds, lambdafn.MetricOutboxParked}
var sweepGauges = append([]string{lambdafn.MetricMattersBehind, lambdafn.MetricMattersQuarantined,
	lambdafn.MetricOldestUnservedDemandSeconds}, outboxGauges...)

// invoke runs the real relay and sweeper handlers, built by the mains'
// constructors over pool, as one scheduled invocation each, and returns
// their errors and the metric names each wrote.
func invoke(t *testing.T, pool *pgxpool.Pool) (relayErr, sweepErr error, relayMetrics, sweepMetrics map[string]bool, published int) {
	t.Helper()
	env := envOf(map[string]string{"RAIL_EVENT_BUS": "brief-rail-test", "RAIL_RELAY_WINDOW": "1s",
		"RAIL_BUILD_QUEUE_URL": "http://127.0.0.1:1/000000000000/build"})
	cfg := func(fn string) lambdafn.Config {
		c, err := lambdafn.LoadConfig(fn, env)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: uuid.NewString()})
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second) // the template's timeouts
	defer cancel()

	var rbuf, sbuf syncBuffer
	relay := lambdafn.NewRelay(cfg(lambdafn.Relay), lambdafn.Deps{Pool: pool, Metrics: emf.New(&rbuf)})
	pub := &okPublisher{}
	relay.Relay.Publisher = pub
	relay.Poll = 50 * time.Millisecond
	_, relayErr = relay.Handle(ctx, lambdafn.ScheduleEvent{Source: "brief-rail.schedule", Task: lambdafn.Relay})
	sweeper := lambdafn.NewSweeper(cfg(lambdafn.Sweeper), lambdafn.Deps{Pool: pool, Metrics: emf.New(&sbuf)})
	_, sweepErr = sweeper.Handle(ctx, lambdafn.ScheduleEvent{Source: "brief-rail.schedule", Task: lambdafn.Sweeper})
	return relayErr, sweepErr, emitted(t, &rbuf), emitted(t, &sbuf), pub.n
}

func deadPool(t *testing.T, url string) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.ConnectTimeout = 2 * time.Second
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// A relay or sweeper that cannot reach its database fails the invocation
// (the Errors alarm) and writes no gauge (the gauge alarms see missing
// data), instead of reporting an empty outbox and a rail that is behind on
// nothing. Two ways down: a real server stopped under a pool that was
// working, and a port nothing listens on.
func TestRelayAndSweeperFailLoudlyWithoutTheirDatabase(t *testing.T) {
	ctx := context.Background()
	srv, err := localpg.Start(ctx, localpg.Options{Logf: t.Logf})
	if err != nil {
		t.Fatalf("start a PostgreSQL to stop: %v", err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	conn, err := pgx.Connect(ctx, srv.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := railsql.Migrate(ctx, conn, nil); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	pool := deadPool(t, srv.URL("postgres"))
	if _, err := postgres.RecordFact(ctx, pool, rail.Fact{FirmID: uuid.New(), Name: rail.FactMatterCreated}); err != nil {
		t.Fatal(err)
	}

	// Up: both succeed and report every gauge (the control: the same
	// handlers, the same checks).
	rerr, serr, rm, sm, published := invoke(t, pool)
	if rerr != nil || serr != nil || published != 1 {
		t.Fatalf("with the database up: relay %v, sweeper %v, %d published", rerr, serr, published)
	}
	for _, g := range outboxGauges {
		if !rm[g] {
			t.Errorf("relay with the database up did not write %s (wrote %v)", g, rm)
		}
	}
	for _, g := range sweepGauges {
		if !sm[g] {
			t.Errorf("sweeper with the database up did not write %s (wrote %v)", g, sm)
		}
	}

	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := l.Addr().(*net.TCPAddr).Port
	l.Close()
	for name, p := range map[string]*pgxpool.Pool{
		"server stopped": pool,
		"closed port":    deadPool(t, fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", closedPort)),
	} {
		t.Run(name, func(t *testing.T) {
			rerr, serr, rm, sm, _ := invoke(t, p)
			if rerr == nil {
				t.Error("the relay invocation succeeded against a dead database")
			}
			if serr == nil {
				t.Error("the sweeper invocation succeeded against a dead database")
			}
			t.Logf("relay: %v\nsweeper: %v", rerr, serr)
			for _, g := range sweepGauges {
				if rm[g] || sm[g] {
					t.Errorf("gauge %s written against a dead database (relay %v, sweeper %v)", g, rm[g], sm[g])
				}
			}
		})
	}
}
