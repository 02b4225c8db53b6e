package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

func TestStaleWhyAndBackfillCommands(t *testing.T) {
	c, firm, matter := newCLI(t)
	m := []string{"--firm", firm, "--matter", matter}
	if out := c.must("stale"); !strings.Contains(out, "every matter is current") {
		t.Fatalf("stale with nothing behind: %s", out)
	}
	c.must(append([]string{"demand"}, m...)...)
	out := c.must("stale", "--settle", "1h")
	if !strings.Contains(out, "settling") || !strings.Contains(out, firm+"/"+matter) || !strings.Contains(out, "waiting for its settle delay") {
		t.Fatalf("stale after a demand:\n%s", out)
	}
	var list []map[string]any
	if err := json.Unmarshal([]byte(c.must("stale", "--json", "--settle", "0s")), &list); err != nil || len(list) != 1 ||
		list[0]["state"] != "nudge_lost" || list[0]["behind"] != float64(1) {
		t.Fatalf("stale --json: %v %v", list, err)
	}
	out = c.must(append([]string{"why"}, m...)...)
	if !strings.Contains(out, "demand -> generation 1 from an operator") || !strings.Contains(out, "VERDICT  behind by 1 since") {
		t.Fatalf("why while behind:\n%s", out)
	}
	c.must(append([]string{"build", "--builder", "extractive"}, m...)...)
	out = c.must(append([]string{"why"}, m...)...)
	for _, w := range []string{"claim token 1 by", "token 1 landed", "frame landed: token 1, generation 1, built by extractive/v15@brief/v2, model invoked",
		"VERDICT  current at generation 1"} {
		if !strings.Contains(out, w) {
			t.Fatalf("why after the build lacks %q:\n%s", w, out)
		}
	}
	var rep struct {
		Verdict string `json:"verdict"`
		Entries []struct {
			Kind string `json:"kind"`
		} `json:"entries"`
	}
	if err := json.Unmarshal([]byte(c.must(append([]string{"why", "--json"}, m...)...)), &rep); err != nil ||
		rep.Verdict != "current at generation 1" || len(rep.Entries) < 4 {
		t.Fatalf("why --json: %+v %v", rep, err)
	}

	// Another builder is deployed: the matter is outdated, visibly.
	bedrock := []string{"--builder", "bedrock", "--model", "amazon.nova-pro-v1:0"}
	if out := c.must(append([]string{"stale"}, bedrock...)...); !strings.Contains(out, "outdated") || !strings.Contains(out, "built by extractive/v15@brief/v2") {
		t.Fatalf("stale with another builder deployed:\n%s", out)
	}
	if out := c.must(append(append([]string{"why"}, m...), bedrock...)...); !strings.Contains(out, "VERDICT  current at generation 1 but outdated") {
		t.Fatalf("why with another builder deployed:\n%s", out)
	}
	if out := c.must(append([]string{"status"}, m...)...); !strings.Contains(out, "extractive/v15@brief/v2") || strings.Contains(out, "OUTDATED") {
		t.Fatalf("status with the deployed builder:\n%s", out)
	}
	digest := c.withEnv(map[string]string{"RAIL_BRIEF_BUILDER": "digest"})
	if out := digest.must(append([]string{"status"}, m...)...); !strings.Contains(out, "OUTDATED: deployed is digest/v1") {
		t.Fatalf("status with another builder deployed:\n%s", out)
	}
	if out := digest.must("stale"); !strings.Contains(out, "outdated") { // the environment, as the functions read it
		t.Fatalf("stale with RAIL_BRIEF_BUILDER=digest:\n%s", out)
	}
	out = c.must(append([]string{"backfill", "--dry-run", "--rate", "30"}, bedrock...)...)
	if !strings.Contains(out, "dry run: 1 matter(s) outdated against bedrock/v2:amazon.nova-pro-v1:0") || !strings.Contains(out, "about 1m0s at the rate") {
		t.Fatalf("backfill --dry-run:\n%s", out)
	}
	if out := c.must("backfill", "pause"); !strings.Contains(out, "backfill paused") {
		t.Fatalf("pause: %s", out)
	}
	if out := c.must("backfill", "pause"); !strings.Contains(out, "already paused") {
		t.Fatalf("pause twice: %s", out)
	}
	if out := c.must("backfill", "status"); !strings.Contains(out, "PAUSED") || !strings.Contains(out, "0 matter(s) (0 admissible now)") {
		t.Fatalf("status:\n%s", out)
	}
	if out := c.must("backfill", "resume"); !strings.Contains(out, "backfill running") {
		t.Fatalf("resume: %s", out)
	}

	// Closed: why says so; the exit code is still 0.
	c.must(append([]string{"matter", "close"}, m...)...)
	if out := c.must(append([]string{"why"}, m...)...); !strings.Contains(out, "(the matter is closed: no builds until it is re-opened)") {
		t.Fatalf("why on a closed matter:\n%s", out)
	}
}

func TestOnCallCommandsRefuseBadInput(t *testing.T) {
	c, firm, matter := newCLI(t)
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"why", "--firm", firm, "--matter", "not-a-uuid"}, exitUsage, `matter id "not-a-uuid" is not a uuid`},
		{[]string{"why", "--firm", "42", "--matter", matter}, exitUsage, `firm id "42" is not a uuid`},
		{[]string{"why", "--firm", firm}, exitUsage, "--firm and --matter are required"},
		{[]string{"why", "--firm", firm, "--matter", uuid.NewString()}, exitNotFound, "no such matter"},
		{[]string{"why", "--firm", uuid.NewString(), "--matter", matter}, exitNotFound, "exists under another firm"},
		{[]string{"stale", "--limit", "0"}, exitUsage, "--limit 0"},
		{[]string{"stale", "--builder", "gpt"}, exitUsage, `unknown builder "gpt"`},
		{[]string{"stale", "--builder", "bedrock", "--model", ""}, exitUsage, "needs a model id"},
		{[]string{"backfill", "--dry-run", "--rate", "0"}, exitUsage, "backfill rate must be a positive number"},
		{[]string{"backfill", "--dry-run", "--rate", "-3"}, exitUsage, "backfill rate must be a positive number"},
		{[]string{"backfill", "status", "--rate", "fast"}, exitUsage, "not a number of builds per minute"},
		{[]string{"backfill"}, exitUsage, "needs status, pause, resume or --dry-run"},
		{[]string{"backfill", "start"}, exitUsage, `backfill "start"`},
	}
	for _, tc := range cases {
		code, _, errOut := c.run(tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.msg) {
			t.Errorf("railctl %v: exit %d, stderr %q; want exit %d and %q", tc.args, code, errOut, tc.code, tc.msg)
		}
	}
}

// The local rail drives the backfill the way the sweeper does in AWS: a
// matter built by another builder (digest) is admitted onto the local
// BackfillQueue, its own builder rebuilds it with the deployed one
// (extractive), and the nudges land in the record `why` reads.
func TestLocalRailBackfillsOutdatedMatters(t *testing.T) {
	c, firm, matter := newCLI(t)
	m := []string{"--firm", firm, "--matter", matter}
	c.must(append([]string{"demand"}, m...)...)
	c.must(append([]string{"build", "--builder", "digest"}, m...)...)
	if out := c.must("stale"); !strings.Contains(out, "outdated") {
		t.Fatalf("a digest frame with extractive deployed is not outdated:\n%s", out)
	}
	ctx := context.Background()
	out := &lockedBuffer{}
	p := newProgress(out, slog.LevelInfo)
	o := railOptions{settle: 200 * time.Millisecond, lease: 10 * time.Second, sweepEvery: 200 * time.Millisecond,
		sweepGrace: time.Hour, scale: 0.01, builder: "extractive", transport: "local"}
	r, err := startRail(ctx, c.url, o, p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// The bucket: a minute's worth at the default rate, as after a long quiet spell.
	if _, err := r.pool.Exec(ctx, `UPDATE ops.backfill_control SET allowance_at = clock_timestamp() - interval '1 minute'`); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(c.must("stale"), "every matter is current") {
		if time.Now().After(deadline) {
			t.Fatalf("the local rail did not backfill the matter:\n%s", out)
		}
		time.Sleep(100 * time.Millisecond) // polling a condition with a generous deadline
	}
	why := c.must(append([]string{"why"}, m...)...)
	for _, w := range []string{"demand -> generation 2 from the backfill", "nudge (backfill) -> backfill queue",
		"built by extractive/v15@brief/v2, model invoked", "VERDICT  current at generation 2"} {
		if !strings.Contains(why, w) {
			t.Fatalf("why after the local backfill lacks %q:\n%s\nrail:\n%s", w, why, out)
		}
	}
}
