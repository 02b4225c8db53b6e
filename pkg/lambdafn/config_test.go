package lambdafn_test

import (
	"strings"
	"testing"
	"time"

	"github.com/pramaan/brief-rail/pkg/lambdafn"
	"github.com/pramaan/brief-rail/pkg/postgres"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoadConfigDefaults(t *testing.T) {
	c, err := lambdafn.LoadConfig(lambdafn.Builder, envOf(map[string]string{"RAIL_BUILD_QUEUE_URL": "http://q"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Lease != 15*time.Minute || c.SettleDelay != 10*time.Second || c.MaxAttempts != 5 || c.RelayWindow != 50*time.Second ||
		c.OutboxRetention != 168*time.Hour || c.EventBus != "default" || c.EventSource != "pramaan.domain" || c.BriefBuilder != "extractive" {
		t.Fatalf("defaults: %+v", c)
	}
	if c.CommitTimeout != 10*time.Second || lambdafn.DefaultReserve(c.CommitTimeout) != 25*time.Second {
		t.Fatalf("commit timeout %s, reserve %s: want 10s and 25s", c.CommitTimeout, lambdafn.DefaultReserve(c.CommitTimeout))
	}
	if c.BedrockMaxTokens != 0 {
		t.Fatalf("bedrock max tokens default %d, want 0 (the model's own)", c.BedrockMaxTokens)
	}
	if c, err := lambdafn.LoadConfig(lambdafn.Builder, envOf(map[string]string{"RAIL_BUILD_QUEUE_URL": "q", "RAIL_BEDROCK_MAX_TOKENS": "3000"})); err != nil || c.BedrockMaxTokens != 3000 {
		t.Fatalf("RAIL_BEDROCK_MAX_TOKENS=3000: %d %v", c.BedrockMaxTokens, err)
	}
	if c.FrameKeep != 10 || c.FrameRetention != 720*time.Hour {
		t.Fatalf("frame retention defaults: keep %d, retention %s", c.FrameKeep, c.FrameRetention)
	}
	c, err = lambdafn.LoadConfig(lambdafn.Sweeper, envOf(map[string]string{"RAIL_BUILD_QUEUE_URL": "http://q",
		"RAIL_FRAME_KEEP": "3", "RAIL_FRAME_RETENTION": "48h"}))
	if err != nil || c.FramePolicy() != (postgres.FrameRetention{Keep: 3, Retention: 48 * time.Hour}) {
		t.Fatalf("frame retention from env: %+v %v", c.FramePolicy(), err)
	}
	// The relay needs no build queue.
	if _, err := lambdafn.LoadConfig(lambdafn.Relay, envOf(nil)); err != nil {
		t.Fatal(err)
	}
}

func TestLoadConfigRefusesMissingAndInvalidEnv(t *testing.T) {
	for name, tc := range map[string]struct {
		fn   string
		env  map[string]string
		want []string
	}{
		"trigger without queue": {lambdafn.Trigger, nil, []string{"RAIL_BUILD_QUEUE_URL is not set", "trigger"}},
		"sweeper without queue": {lambdafn.Sweeper, nil, []string{"RAIL_BUILD_QUEUE_URL"}},
		"bad durations": {lambdafn.Trigger, map[string]string{"RAIL_BUILD_QUEUE_URL": "q", "RAIL_SETTLE_DELAY": "soon", "RAIL_LEASE": "5s"},
			[]string{`RAIL_SETTLE_DELAY="soon"`, "RAIL_LEASE=5s is outside"}},
		"settle beyond SQS": {lambdafn.Trigger, map[string]string{"RAIL_BUILD_QUEUE_URL": "q", "RAIL_SETTLE_DELAY": "16m"}, []string{"RAIL_SETTLE_DELAY"}},
		"bad attempts":      {lambdafn.Sweeper, map[string]string{"RAIL_BUILD_QUEUE_URL": "q", "RAIL_MAX_ATTEMPTS": "0"}, []string{"RAIL_MAX_ATTEMPTS"}},
		"bedrock without model": {lambdafn.Builder, map[string]string{"RAIL_BUILD_QUEUE_URL": "q", "RAIL_BRIEF_BUILDER": "bedrock"},
			[]string{"RAIL_BEDROCK_MODEL_ID"}},
		"bedrock max tokens not a number": {lambdafn.Builder, map[string]string{"RAIL_BUILD_QUEUE_URL": "q", "RAIL_BEDROCK_MAX_TOKENS": "lots"},
			[]string{`RAIL_BEDROCK_MAX_TOKENS="lots"`}},
		"unknown builder":  {lambdafn.Builder, map[string]string{"RAIL_BUILD_QUEUE_URL": "q", "RAIL_BRIEF_BUILDER": "magic"}, []string{"RAIL_BRIEF_BUILDER"}},
		"unknown function": {"janitor", nil, []string{"unknown function"}},
		"commit timeout not a duration": {lambdafn.Builder, map[string]string{"RAIL_BUILD_QUEUE_URL": "q", "RAIL_COMMIT_TIMEOUT": "ten"},
			[]string{`RAIL_COMMIT_TIMEOUT="ten"`}},
		"commit timeout out of range": {lambdafn.Builder, map[string]string{"RAIL_BUILD_QUEUE_URL": "q", "RAIL_COMMIT_TIMEOUT": "2m"},
			[]string{"RAIL_COMMIT_TIMEOUT=2m0s is outside"}},
		"commit reserve over half the lease": {lambdafn.Builder, map[string]string{"RAIL_BUILD_QUEUE_URL": "q", "RAIL_COMMIT_TIMEOUT": "20s", "RAIL_LEASE": "1m"},
			[]string{"RAIL_COMMIT_TIMEOUT=20s leaves too little of RAIL_LEASE=1m0s"}},
		"frame keep zero": {lambdafn.Sweeper, map[string]string{"RAIL_BUILD_QUEUE_URL": "q", "RAIL_FRAME_KEEP": "0", "RAIL_FRAME_RETENTION": "1m"},
			[]string{"RAIL_FRAME_KEEP", "RAIL_FRAME_RETENTION=1m0s is outside"}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := lambdafn.LoadConfig(tc.fn, envOf(tc.env))
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// railctl reads the functions' configuration the same way: same variables,
// same defaults, same ranges, and says where each value came from.
func TestLoadOperatorConfig(t *testing.T) {
	c, err := lambdafn.LoadOperatorConfig(envOf(map[string]string{"RAIL_LEASE": "20m"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Lease != 20*time.Minute || c.MaxAttempts != 5 ||
		c.Sources[lambdafn.EnvLease] != "RAIL_LEASE" || c.Sources[lambdafn.EnvMaxAttempts] != lambdafn.SourceDefault {
		t.Fatalf("operator config: %+v", c)
	}
	fn, err := lambdafn.LoadConfig(lambdafn.Sweeper, envOf(map[string]string{"RAIL_LEASE": "20m", "RAIL_BUILD_QUEUE_URL": "q"}))
	if err != nil {
		t.Fatal(err)
	}
	if fn.RailConfig() != c.RailConfig() {
		t.Fatalf("sweeper %+v and operator %+v read one environment differently", fn.RailConfig(), c.RailConfig())
	}
	_, err = lambdafn.LoadOperatorConfig(envOf(map[string]string{"RAIL_MAX_ATTEMPTS": "many", "RAIL_LEASE": "5s"}))
	if err == nil || !strings.Contains(err.Error(), `RAIL_MAX_ATTEMPTS="many"`) || !strings.Contains(err.Error(), "RAIL_LEASE=5s is outside") {
		t.Fatalf("bad values: %v", err)
	}
}
