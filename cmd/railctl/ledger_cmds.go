package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/pramaan/brief-rail/pkg/app"
	"github.com/pramaan/brief-rail/pkg/lambdafn"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
	"github.com/pramaan/brief-rail/pkg/record"
)

func cmdMigrate(ctx context.Context, g *globals, args []string) error {
	s, err := g.flags("migrate", "", 0).open(ctx, args, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	v, err := app.MigrateSchema(ctx, s.pool, func(name string) { fmt.Fprintf(g.stderr, "applying %s\n", name) })
	if err != nil {
		return err
	}
	fmt.Fprintf(g.stdout, "schema at version %d\n", v)
	return nil
}

func cmdMatter(ctx context.Context, g *globals, args []string) error {
	if len(args) == 0 {
		return usageError("matter: want a subcommand: add, close or open")
	}
	sub := args[0]
	c := g.flags("matter "+sub, "--firm F --matter M [--title T]", withMatter)
	var title *string
	if sub == "add" {
		title = c.String("title", "", "matter title")
	}
	if sub != "add" && sub != "close" && sub != "open" {
		return usageError("matter: unknown subcommand %q (want add, close or open)", sub)
	}
	s, err := c.open(ctx, args[1:], nil)
	if err != nil {
		return err
	}
	defer s.Close()
	if sub == "add" {
		created, err := record.NewMatter(ctx, s.pool, s.ref, *title)
		if err != nil {
			return err
		}
		fmt.Fprintf(g.stdout, "matter %s %s\n", s.ref, map[bool]string{true: "added", false: "already exists"}[created])
		return nil
	}
	status := map[string]string{"close": "closed", "open": "open"}[sub]
	if err := postgres.SetMatterStatus(ctx, s.pool, s.ref, status); err != nil {
		return err
	}
	fmt.Fprintf(g.stdout, "matter %s %s\n", s.ref, status)
	return nil
}

func cmdDoc(ctx context.Context, g *globals, args []string) error {
	if len(args) == 0 || args[0] != "add" {
		return usageError("doc: want the subcommand add")
	}
	c := g.flags("doc add", "--firm F --matter M --name N --text-file PATH", withMatter)
	name := c.String("name", "", "document name (required)")
	path := c.String("text-file", "", "UTF-8 text file; pages separated by form feeds (required)")
	var pages []string
	s, err := c.open(ctx, args[1:], func() error {
		if *name == "" || *path == "" {
			return usageError("--name and --text-file are required")
		}
		raw, err := os.ReadFile(*path)
		if err != nil {
			return fmt.Errorf("read text file: %w", err)
		}
		pages = strings.Split(string(raw), "\f")
		return nil
	})
	if err != nil {
		return err
	}
	defer s.Close()
	id, err := record.StoreDocument(ctx, s.pool, s.ref, rail.NewDocument{Name: *name, Pages: pages})
	if err != nil {
		return err
	}
	fmt.Fprintf(g.stdout, "document %s stored (%d pages)\n", id, len(pages))
	return nil
}

func cmdDemand(ctx context.Context, g *globals, args []string) error {
	s, err := g.flags("demand", "--firm F --matter M", withMatter).open(ctx, args, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	res, err := s.ledger().Demand(ctx, s.ref, 1)
	if err != nil {
		return err
	}
	fmt.Fprintf(g.stdout, "demand recorded: requested_generation=%d run_status=%s\n", res.Requested, res.Status)
	if res.Held {
		fmt.Fprintln(g.stdout, "held: the matter is closed; it is built after the matter is re-opened")
	}
	return nil
}

func cmdBuild(ctx context.Context, g *globals, args []string) error {
	c := g.flags("build", "--firm F --matter M [--lease D] [--max-attempts N] [--stall D] [--worker ID]", withMatter|withLedger)
	stall := c.Duration("stall", 0, "pause the worker entirely (no heartbeats) just before its commit")
	worker := c.String("worker", defaultWorkerID(), "worker id recorded on the claim")
	builderName := c.String("builder", app.BuilderDigest, "frame builder: "+strings.Join(app.BuilderNames(), ", "))
	var fb rail.FrameBuilder
	s, err := c.open(ctx, args, func() (err error) {
		fb, err = app.NewFrameBuilder(ctx, *builderName, app.BuilderOptions{BedrockModelID: g.env(lambdafn.EnvBedrockModelID)})
		if err != nil {
			return usageError("%v", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	defer s.Close()
	ledger := s.ledger()
	if err := postgres.CheckMatter(ctx, s.pool, s.ref); err != nil { // unknown or misfiled matter: a clear error
		return err
	}
	w := &rail.Worker{Ledger: ledger, Builder: fb, ID: *worker}
	if *stall > 0 {
		w.BeforeCommit = func(ctx context.Context, c rail.Claim) {
			fmt.Fprintf(g.stderr, "token %d: stalling %s before commit (no heartbeats)\n", c.Token, *stall)
			select {
			case <-time.After(*stall):
			case <-ctx.Done():
			}
		}
	}
	if hook := g.beforeCommit; hook != nil {
		stallFor := w.BeforeCommit
		w.BeforeCommit = func(ctx context.Context, c rail.Claim) {
			if stallFor != nil {
				stallFor(ctx, c)
			}
			hook(ctx, c)
		}
	}
	out, err := w.BuildOnce(ctx, s.ref)
	if err != nil {
		return err
	}
	switch {
	case !out.Claimed:
		fmt.Fprintln(g.stdout, "nothing to claim: no unserved demand, a live claim, backoff, quarantine or a closed matter")
		return withCode(exitNothing, "nothing to claim")
	case out.Fenced:
		fmt.Fprintf(g.stdout, "fenced: token %d is stale; nothing landed\n", out.Claim.Token)
		return withCode(exitFenced, "fenced")
	case out.Failed:
		return fmt.Errorf("build failed (token %d); recorded, quarantined=%v", out.Claim.Token, out.Quarantined)
	}
	fmt.Fprintf(g.stdout, "landed: token %d, target_generation %d, model invoked %v, %s\n",
		out.Claim.Token, out.Claim.Target, out.ModelInvoked, out.Duration.Round(time.Millisecond))
	if out.FollowUpDue {
		fmt.Fprintln(g.stdout, "follow-up due: demand arrived during the build (run build again)")
	}
	return nil
}

func defaultWorkerID() string {
	h, _ := os.Hostname()
	return fmt.Sprintf("railctl@%s/%d", h, os.Getpid())
}

func cmdStatus(ctx context.Context, g *globals, args []string) error {
	c := g.flags("status", "--firm F --matter M [--json] [--lease D] [--max-attempts N]", withMatter|withLedger)
	asJSON := c.Bool("json", false, "print the row as JSON (keys are the column names)")
	s, err := c.open(ctx, args, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	ref, ledger := s.ref, s.ledger()
	j, err := ledger.Job(ctx, ref)
	if err != nil {
		return err
	}
	// Freshness as on-call's commands judge it: the state, and whether the
	// frame was built by the deployed builder ($RAIL_BRIEF_BUILDER).
	oc, err := s.onCallConfig()
	if err != nil {
		return err
	}
	id := oc.Deployed
	d, err := ledger.Diagnose(ctx, ref, oc)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(g.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			postgres.JobRow
			State    string                `json:"state"`
			Reason   string                `json:"reason"`
			Outdated bool                  `json:"outdated"`
			BuiltBy  *rail.BuilderIdentity `json:"built_by"`
			Deployed rail.BuilderIdentity  `json:"deployed_builder"`
		}{j, d.State, d.Reason, d.Outdated, d.BuiltBy, id})
	}
	w := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "matter\t%s (%s)\n", ref, j.MatterStatus)
	fmt.Fprintf(w, "brief\t%s\n", currentText(j))
	fmt.Fprintf(w, "state\t%s: %s\n", d.State, d.Reason)
	if d.BuiltBy != nil {
		out := ""
		if d.Outdated {
			out = fmt.Sprintf(" — OUTDATED: deployed is %s (the backfill rebuilds it)", id)
		}
		fmt.Fprintf(w, "built by\t%s%s\n", d.BuiltBy, out)
	}
	fmt.Fprintf(w, "run_status\t%s\n", j.RunStatus)
	fmt.Fprintf(w, "requested / target / built\t%d / %d / %d\n", j.RequestedGeneration, j.TargetGeneration, j.BuiltGeneration)
	fmt.Fprintf(w, "token (claimed_generation)\t%d\n", j.ClaimedGeneration)
	fmt.Fprintf(w, "rebuild_needed\t%v\n", j.RebuildNeeded)
	if j.HeldDemands > 0 {
		fmt.Fprintf(w, "closed\t%d demand(s) held until re-opened (not counted as unserved)\n", j.HeldDemands)
	} else if j.UnservedAgeSeconds != nil {
		fmt.Fprintf(w, "oldest unserved demand\t%.1fs old\n", *j.UnservedAgeSeconds)
	}
	if j.LeaseAgeSeconds != nil {
		exp := ""
		if j.LeaseExpired {
			exp = " (EXPIRED)"
		}
		lease := s.cfg.Lease
		if j.LeaseSeconds != nil { // the lease this claim was granted
			lease = time.Duration(*j.LeaseSeconds * float64(time.Second))
		}
		fmt.Fprintf(w, "lease\theld by %s, age %.1fs of %s%s\n", j.ClaimedBy, *j.LeaseAgeSeconds, lease, exp)
	}
	fmt.Fprintf(w, "attempts\t%d\n", j.Attempts)
	if j.LastError != "" {
		fmt.Fprintf(w, "last_error\t%s\n", j.LastError)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	runs, err := ledger.Runs(ctx, ref, 3)
	if err != nil {
		return err
	}
	if len(runs) > 0 {
		fmt.Fprintln(g.stdout, "\nlast runs:")
		printRuns(g, runs)
	}
	return nil
}

func currentText(j postgres.JobRow) string {
	switch {
	case j.Current:
		return "current"
	case j.HeldDemands > 0:
		return fmt.Sprintf("behind by %d demand(s), held: the matter is closed", j.HeldDemands)
	case j.RunStatus == rail.StatusQuarantined:
		return fmt.Sprintf("behind by %d demand(s), QUARANTINED", j.RequestedGeneration-j.BuiltGeneration)
	default:
		return fmt.Sprintf("behind by %d demand(s)", j.RequestedGeneration-j.BuiltGeneration)
	}
}

func cmdRuns(ctx context.Context, g *globals, args []string) error {
	c := g.flags("runs", "--firm F --matter M [--limit N] [--json]", withMatter)
	limit := c.Int("limit", 20, "how many attempts, newest first")
	asJSON := c.Bool("json", false, "print JSON")
	s, err := c.open(ctx, args, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	runs, err := s.ledger().Runs(ctx, s.ref, *limit)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(g.stdout).Encode(runs)
	}
	printRuns(g, runs)
	return nil
}

func printRuns(g *globals, runs []postgres.RunRow) {
	w := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "TOKEN\tTARGET\tOUTCOME\tWORKER\tCLAIMED\tTOOK\tERROR")
	for _, r := range runs {
		took := "-"
		if r.FinishedAt != nil {
			took = r.FinishedAt.Sub(r.ClaimedAt).Round(time.Millisecond).String()
		}
		fmt.Fprintf(w, "%d\t%d\t%s\t%s\t%s\t%s\t%s\n", r.Token, r.Target, r.Outcome, r.WorkerID,
			r.ClaimedAt.Local().Format(time.TimeOnly), took, r.Error)
	}
	w.Flush()
}

// cmdSweep invokes the sweeper function's own handler once, as its
// schedule does (app.ForOperator): quarantine, lease expiries, re-nudges
// onto RAIL_BUILD_QUEUE_URL, pruning, the backfill's admission onto
// RAIL_BACKFILL_QUEUE_URL and the gauges. It prints the handler's result;
// an error of any step fails the command after the others ran.
func cmdSweep(ctx context.Context, g *globals, args []string) error {
	c := g.flags("sweep", "[--lease D] [--max-attempts N] [--json] [--metrics]", withLedger)
	asJSON := c.Bool("json", false, "print the sweeper's result as JSON (what the function returns)")
	metrics := c.Bool("metrics", false, "write the sweeper's metrics (CloudWatch EMF lines) to stderr")
	s, err := c.open(ctx, args, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	if _, err := s.onCallConfig(); err != nil { // the sweeper judges frames against the deployed builder
		return err
	}
	rl, err := s.operatorRail(ctx, *metrics)
	if err != nil {
		return err
	}
	res, err := rl.InvokeSweeper(ctx)
	if *asJSON {
		if jerr := json.NewEncoder(g.stdout).Encode(res); jerr != nil {
			return jerr
		}
		return err
	}
	fmt.Fprintf(g.stdout, "quarantined now: %d\nlease expiries noted: %d\nunserved demand re-nudged: %d\n",
		res.Quarantined, res.LeaseExpiries, res.Renudged)
	fmt.Fprintf(g.stdout, "matters behind: %d, quarantined: %d, oldest unserved demand: %.0fs, closed with demand held: %d\n",
		res.MattersBehind, res.QuarantinedNow, res.OldestUnservedDemandSeconds, res.MattersClosedWithDemand)
	fmt.Fprintf(g.stdout, "outdated: %d, backfill admitted: %d%s\n", res.Outdated, res.Backfilled,
		map[bool]string{true: " (backfill paused)"}[res.BackfillPaused])
	fmt.Fprintf(g.stdout, "pruned: outbox %d (%d left), inbox %d, frames %d, on-call records %d\n",
		res.OutboxPruned, res.OutboxPruneLeft, res.InboxPruned, res.FramesPruned.Frames, res.RecordsPruned)
	fmt.Fprintf(g.stdout, "outbox: backlog %d (oldest %.1fs), parked %d\n", res.OutboxBacklog, res.OutboxOldestAgeSeconds, res.OutboxParked)
	return err
}

func cmdRelease(ctx context.Context, g *globals, args []string) error {
	s, err := g.flags("release", "--firm F --matter M", withMatter).open(ctx, args, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := postgres.CheckMatter(ctx, s.pool, s.ref); err != nil {
		return err
	}
	ok, err := s.ledger().Release(ctx, s.ref)
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("matter is not quarantined")
	}
	fmt.Fprintf(g.stdout, "matter %s released; the sweeper will nudge its unserved demand\n", s.ref)
	return nil
}
