package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// railctl reads the deployed configuration the way the functions do
// (RAIL_LEASE, RAIL_MAX_ATTEMPTS), flags override it, it prints what it
// used and where each value came from, and a bad value is one clear error
// naming the variable.
func TestOperatorCommandsReadTheDeployedConfiguration(t *testing.T) {
	c, firm, matter := newCLI(t)
	deployed := c.withEnv(map[string]string{"RAIL_LEASE": "20m", "RAIL_MAX_ATTEMPTS": ""})
	m := []string{"--firm", firm, "--matter", matter}

	_, _, errOut := deployed.run(append([]string{"status"}, m...)...)
	if !strings.Contains(errOut, "config: lease=20m0s (RAIL_LEASE) max_attempts=5 (default)") {
		t.Fatalf("status did not print the configuration it used: %q", errOut)
	}
	// The claim railctl build makes is granted the deployed lease: the row
	// stores it (migration 007), so the value was used, not just printed.
	deployed.must(append([]string{"demand"}, m...)...)
	code, _, errOut := deployed.run(append([]string{"build"}, m...)...)
	if code != 0 || !strings.Contains(errOut, "lease=20m0s (RAIL_LEASE)") {
		t.Fatalf("build: exit %d %q", code, errOut)
	}
	if got := leaseOnRow(t, deployed, m); got != 1200 {
		t.Fatalf("build with RAIL_LEASE=20m claimed with a %vs lease", got)
	}

	// A flag overrides the environment.
	deployed.must(append([]string{"demand"}, m...)...)
	code, _, errOut = deployed.run(append([]string{"build", "--lease", "25m", "--max-attempts", "7"}, m...)...)
	if code != 0 || !strings.Contains(errOut, "config: lease=25m0s (--lease) max_attempts=7 (--max-attempts)") {
		t.Fatalf("build --lease 25m: exit %d %q", code, errOut)
	}
	if got := leaseOnRow(t, deployed, m); got != 1500 {
		t.Fatalf("build --lease 25m claimed with a %vs lease", got)
	}
	if code, _, errOut := deployed.run("sweep", "--max-attempts", "3"); code != 0 ||
		!strings.Contains(errOut, "config: lease=20m0s (RAIL_LEASE) max_attempts=3 (--max-attempts)") {
		t.Fatalf("sweep: exit %d %q", code, errOut)
	}

	// Bad values: one clear error naming the variable (or flag), exit 2,
	// nothing done.
	for _, tc := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{map[string]string{"RAIL_LEASE": "soon"}, []string{"sweep"}, `RAIL_LEASE="soon" is not a duration`},
		{map[string]string{"RAIL_LEASE": "5s"}, []string{"status", "--firm", firm, "--matter", matter}, "RAIL_LEASE=5s is outside 1m0s..24h0m0s"},
		{map[string]string{"RAIL_MAX_ATTEMPTS": "0"}, append([]string{"build"}, m...), `RAIL_MAX_ATTEMPTS="0": want an integer from 1 to 100`},
		{nil, []string{"sweep", "--lease", "-1s"}, "--lease=-1s: want a positive duration"},
		{nil, []string{"sweep", "--max-attempts", "0"}, "--max-attempts=0: want an integer from 1 to 100"},
	} {
		code, out, errOut := c.withEnv(tc.env).run(tc.args...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 || out != "" {
			t.Errorf("railctl %v with %v: exit %d stdout %q stderr %q; want exit %d and one line with %q",
				tc.args, tc.env, code, out, errOut, exitUsage, tc.want)
		}
	}
}

func leaseOnRow(t *testing.T, c cli, m []string) float64 {
	t.Helper()
	var row struct {
		LeaseSeconds float64 `json:"lease_seconds"`
	}
	if err := json.Unmarshal([]byte(c.must(append([]string{"status", "--json"}, m...)...)), &row); err != nil {
		t.Fatal(err)
	}
	return row.LeaseSeconds
}
