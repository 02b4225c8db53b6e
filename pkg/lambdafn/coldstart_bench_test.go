package lambdafn_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/pramaan/brief-rail/internal/testenv/railtest"
	"github.com/pramaan/brief-rail/internal/testenv/rie"
	"github.com/pramaan/brief-rail/pkg/samtemplate"
)

// BenchmarkColdStart starts each function's host bootstrap under the Lambda
// runtime emulator b.N times, invokes it once with its sample event against
// a migrated database (as its own role), and reports the medians of the
// cold start's init duration (exec to the runtime's first request for an
// event, the emulator's INIT REPORT) and of the bootstrap's peak resident
// memory (VmHWM). make bench runs it with -benchtime 5x.
//
//	go test ./pkg/lambdafn -run '^$' -bench ColdStart -benchtime 5x
func BenchmarkColdStart(b *testing.B) {
	bin := emulatorBin(b)
	tpl, err := samtemplate.Load("../../template.yaml")
	if err != nil {
		b.Fatal(err)
	}
	db := railtest.NewDB(b)
	events := map[string]string{"RelayFunction": "relay.json", "TriggerFunction": "trigger.json",
		"BuilderFunction": "builder.json", "SweeperFunction": "sweeper.json", "MigrateFunction": "migrate.json"}
	for _, id := range []string{"RelayFunction", "TriggerFunction", "BuilderFunction", "SweeperFunction", "MigrateFunction"} {
		b.Run(id, func(b *testing.B) {
			spec, err := tpl.Function(id)
			if err != nil {
				b.Fatal(err)
			}
			boot := bootstrapFor(b, id)
			env := []string{"DATABASE_URL=" + asRole(b, db.URL, fnRoles[id]), "DB_IAM_AUTH=false",
				"RAIL_BUILD_QUEUE_URL=http://127.0.0.1:1/000000000000/unused", "RAIL_RELAY_WINDOW=1s",
				"AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=bench", "AWS_SECRET_ACCESS_KEY=bench"}
			payload := readEvent(b, events[id])
			var inits, rss []float64
			for b.Loop() {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				em, err := rie.Start(ctx, bin, rie.Options{Bootstrap: boot, Env: env, FunctionName: id,
					TimeoutSec: spec.Timeout, MemoryMB: spec.MemorySize})
				if err != nil {
					cancel()
					b.Fatal(err)
				}
				res, err := em.Invoke(ctx, payload)
				if err == nil && res.Failed() && id != "BuilderFunction" && id != "TriggerFunction" {
					b.Logf("%s: invocation failed: %s", id, res.Body)
				}
				kb, rerr := em.RuntimeMaxRSSKB()
				init := em.WaitInitMS(10 * time.Second)
				em.Stop()
				cancel()
				if err != nil || rerr != nil || init == 0 {
					b.Fatalf("%s: invoke %v, memory %v, init %v:\n%s", id, err, rerr, init, em.Output())
				}
				inits = append(inits, init)
				rss = append(rss, float64(kb)/1024)
			}
			b.ReportMetric(median(inits), "init-ms")
			b.ReportMetric(median(rss), "maxrss-MB")
			b.ReportMetric(0, "ns/op")
		})
	}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
