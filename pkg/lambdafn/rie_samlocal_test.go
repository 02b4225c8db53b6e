package lambdafn_test

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pramaan/brief-rail/internal/testenv/rie"
)

// A `sam local invoke` stand-in: each function's bootstrap under the Lambda runtime with only
// the environment SAM CLI would build from the template and events/env.json (the declared
// variables, a Ref to a resource as its logical id, env.json's values for declared variables
// only; no DATABASE_URL, no DB_PASSWORD). What the test changes, and only that: the database
// host, port and name become the test's server (env.json names the developer's), and the queue
// URLs and bus become moto's (env.json names a dev stack's).
func TestBootstrapsWithTheSAMLocalEnvironment(t *testing.T) {
	s := newEmulatorStack(t)
	bin := emulatorBin(t)
	raw, err := os.ReadFile("../../events/env.json")
	if err != nil {
		t.Fatal(err)
	}
	var envFile map[string]map[string]string
	if err := json.Unmarshal(raw, &envFile); err != nil {
		t.Fatalf("events/env.json: %v", err)
	}
	dbu, err := url.Parse(s.db.URL)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ fn, event, want string }{
		{"RelayFunction", "relay.json", `"published"`},
		{"SweeperFunction", "sweeper.json", `"renudged"`},
	} {
		env, ignored, err := s.tpl.SAMLocalEnv(c.fn, envFile)
		if err != nil {
			t.Fatal(err)
		}
		if len(ignored) > 0 {
			t.Errorf("%s: events/env.json sets %v, which sam local ignores", c.fn, ignored)
		}
		for _, k := range []string{"DATABASE_URL", "DB_PASSWORD", "DB_SSLMODE"} {
			if _, ok := env[k]; ok {
				t.Errorf("%s: %s is in the sam local environment, but the template does not declare it", c.fn, k)
			}
		}
		// The test's stand-ins for the developer's server and dev stack.
		env["DB_HOST"], env["DB_PORT"] = dbu.Hostname(), dbu.Port()
		env["DB_NAME"] = strings.TrimPrefix(dbu.Path, "/")
		if os.Getenv("DATABASE_URL") != "" { // an external server: its own user, who may need a password
			t.Skip("DATABASE_URL is set: the sam local stand-in needs the test server's trusted local roles")
		}
		for k, v := range env {
			switch {
			case k == "RAIL_BUILD_QUEUE_URL":
				env[k] = s.buildQ.url
			case k == "RAIL_BACKFILL_QUEUE_URL":
				env[k] = s.backfillQ.url
			case k == "RAIL_EVENT_BUS":
				env[k] = s.bus
			case strings.HasSuffix(k, "_QUEUE_URL") && v != "":
				t.Fatalf("%s: %s=%q: a queue URL this test does not stand in for", c.fn, k, v)
			}
		}
		var list []string
		for k, v := range env {
			list = append(list, k+"="+v)
		}
		list = append(list, s.moto.Env()...)
		spec, err := s.tpl.Function(c.fn)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(s.ctx, time.Minute)
		em, err := rie.Start(ctx, bin, rie.Options{Bootstrap: bootstrapFor(t, c.fn), Env: list, FunctionName: c.fn,
			TimeoutSec: spec.Timeout, MemoryMB: spec.MemorySize})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			em.Stop()
			if t.Failed() {
				t.Logf("%s under the emulator:\n%s", c.fn, em.Output())
			}
		})
		body := invokeOK(t, em, readEvent(t, c.event))
		if !strings.Contains(string(body), c.want) {
			t.Fatalf("%s with the sam local environment: %s", c.fn, body)
		}
		t.Logf("%s with the sam local environment (DB_USER=%s): %s", c.fn, env["DB_USER"], body)
	}
}
