package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// On-call's commands: stale (how stale), why (why), backfill (rebuild
// what an older builder built, gently). They read the deployment's
// configuration from the same variables the functions read
// (RAIL_LEASE, RAIL_SETTLE_DELAY, RAIL_BRIEF_BUILDER, RAIL_BEDROCK_MODEL_ID,
// RAIL_BACKFILL_RATE); flags override them.

func cmdStale(ctx context.Context, g *globals, args []string) error {
	c := g.flags("stale", "[--limit N] [--json]", withOnCall)
	limit := c.Int("limit", 20, "how many matters to list (1-10000)")
	asJSON := c.Bool("json", false, "print the diagnoses as JSON")
	s, err := c.open(ctx, args, func() error {
		if *limit < 1 || *limit > 10000 {
			return usageError("--limit %d: want 1 to 10000", *limit)
		}
		return nil
	})
	if err != nil {
		return err
	}
	defer s.Close()
	oc := s.onCall
	list, err := s.ledger().Stale(ctx, *limit, oc)
	if err != nil {
		return err
	}
	if *asJSON {
		if list == nil {
			list = []postgres.Diagnosis{}
		}
		return json.NewEncoder(g.stdout).Encode(list)
	}
	if len(list) == 0 {
		fmt.Fprintf(g.stdout, "every matter is current and built by the deployed builder (%s)\n", oc.Deployed)
		return nil
	}
	w := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "AGE\tSTATE\tBEHIND\tFIRM/MATTER\tWHY")
	for _, d := range list {
		age := "-"
		if d.Behind > 0 {
			age = (time.Duration(d.AgeSeconds * float64(time.Second))).Round(time.Second).String()
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\n", age, d.State, d.Behind, d.MatterRef, d.Reason)
	}
	return w.Flush()
}

func cmdWhy(ctx context.Context, g *globals, args []string) error {
	c := g.flags("why", "--firm F --matter M [--limit N] [--json]", withMatter|withOnCall)
	limit := c.Int("limit", 200, "keep the newest N timeline entries (1-100000)")
	asJSON := c.Bool("json", false, "print the timeline and verdict as JSON")
	s, err := c.open(ctx, args, func() error {
		if *limit < 1 || *limit > 100000 {
			return usageError("--limit %d: want 1 to 100000", *limit)
		}
		return nil
	})
	if err != nil {
		return err
	}
	defer s.Close()
	ref := s.ref
	rep, err := s.ledger().Why(ctx, ref, s.onCall, *limit)
	if err != nil {
		return matterErr(err)
	}
	if *asJSON {
		if rep.Entries == nil {
			rep.Entries = []postgres.WhyEntry{}
		}
		enc := json.NewEncoder(g.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	d := rep.Diagnosis
	fmt.Fprintf(g.stdout, "matter %s (%s); times UTC, database clock\n", ref, d.MatterStatus)
	if rep.Omitted > 0 {
		fmt.Fprintf(g.stdout, "… %d older entries omitted (--limit)\n", rep.Omitted)
	}
	w := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
	for _, e := range rep.Entries {
		tr := ""
		if e.TraceID != "" {
			tr = "trace=" + e.TraceID
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", e.At.UTC().Format("15:04:05.000"), e.Kind, e.Text, tr)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	verdict := rep.Verdict
	if d.MatterStatus == "closed" && d.Behind == 0 {
		verdict += " (the matter is closed: no builds until it is re-opened)"
	}
	fmt.Fprintf(g.stdout, "VERDICT  %s\n", verdict)
	return nil
}

func cmdBackfill(ctx context.Context, g *globals, args []string) error {
	const synopsis = "status [--json] | pause | resume | --dry-run   [--rate N] [--builder B] [--model M]"
	sub := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub, args = args[0], args[1:]
	}
	c := g.flags("backfill", synopsis, withOnCall)
	dry := c.Bool("dry-run", false, "say how many matters are outdated and how long the backfill takes at the rate; change nothing")
	asJSON := c.Bool("json", false, "print the status as JSON")
	s, err := c.open(ctx, args, func() error {
		switch {
		case sub == "" && !*dry:
			return usageError("backfill needs status, pause, resume or --dry-run")
		case sub != "" && *dry:
			return usageError("--dry-run goes alone: railctl backfill --dry-run")
		case sub != "" && sub != "status" && sub != "pause" && sub != "resume":
			return usageError("backfill %q: want status, pause, resume or --dry-run", sub)
		}
		return nil
	})
	if err != nil {
		return err
	}
	defer s.Close()
	bf := &rail.Backfill{Ledger: s.ledger(), Deployed: s.onCall.Deployed, Rate: s.cfg.BackfillRate, Concurrency: s.cfg.BackfillConcurrency}
	switch sub {
	case "pause", "resume":
		by := "railctl"
		if u := g.env("USER"); u != "" {
			by = "railctl:" + u
		}
		changed, err := postgres.SetBackfillPaused(ctx, s.pool, sub == "pause", by)
		if err != nil {
			return err
		}
		state := map[string]string{"pause": "paused", "resume": "running"}[sub]
		if !changed {
			fmt.Fprintf(g.stdout, "backfill already %s\n", state)
			return nil
		}
		fmt.Fprintf(g.stdout, "backfill %s (the sweeper's next pass %s)\n", state,
			map[string]string{"pause": "admits nothing; builds already admitted finish", "resume": "admits at the rate again"}[sub])
		return nil
	}
	st, err := bf.Status(ctx)
	if err != nil {
		return err
	}
	st.DryRun = *dry
	if *asJSON {
		return json.NewEncoder(g.stdout).Encode(st)
	}
	took := backfillTook(st)
	if *dry {
		fmt.Fprintf(g.stdout, "dry run: %d matter(s) outdated against %s; at %g builds/min with %d backfill builder(s) the backfill takes %s (%d admissible now; the rest are behind on live demand, quarantined or building). Nothing changed.\n",
			st.Outdated, st.Deployed, st.Rate, st.Concurrency, took, st.Admissible)
		return nil
	}
	state := "running"
	if st.Paused {
		state = "PAUSED"
	}
	w := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "backfill\t%s (since %s, by %s)\n", state, st.ChangedAt.UTC().Format(time.RFC3339), orDash(st.ChangedBy))
	fmt.Fprintf(w, "deployed builder\t%s\n", st.Deployed)
	fmt.Fprintf(w, "rate\t%g builds/min\n", st.Rate)
	fmt.Fprintf(w, "outdated\t%d matter(s) (%d admissible now)\n", st.Outdated, st.Admissible)
	fmt.Fprintf(w, "builders\t%d (the backfill queue's MaximumConcurrency)\n", st.Concurrency)
	fmt.Fprintf(w, "in flight\t%d matter(s) with unserved backfill demand (queued or building; oldest %s)\n", st.InFlight,
		(time.Duration(st.OldestSeconds) * time.Second).String())
	fmt.Fprintf(w, "served\t%d in the last %s; the next pass may admit %d more by capacity\n", st.Served, rail.BackfillWindow, st.Room)
	fmt.Fprintf(w, "admitted\t%d build(s) in all\n", st.Admitted)
	fmt.Fprintf(w, "time left\t%s\n", took)
	return w.Flush()
}

// backfillTook says how long the backfill takes, at what pace and why
// (rail.BackfillETA's projection).
func backfillTook(st rail.BackfillStatus) string {
	if st.ETASeconds < 0 {
		return fmt.Sprintf("unknown: admitted backfill has waited %s and the builders served none in the last %s (stuck builders, or builds longer than that)",
			(time.Duration(st.OldestSeconds) * time.Second).String(), rail.BackfillWindow)
	}
	eta := time.Duration(st.ETASeconds * float64(time.Second)).Round(time.Second)
	if st.BuildersBehind {
		return fmt.Sprintf("about %s at the builders' pace, %g builds/min (they are behind the rate of %g: raise the backfill builders' concurrency to go faster)",
			eta, st.PacePerMinute, st.Rate)
	}
	return fmt.Sprintf("about %s at the rate (%g builds/min; the builders keep up)", eta, st.Rate)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
