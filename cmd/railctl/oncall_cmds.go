package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/pramaan/brief-rail/pkg/lambdafn"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// On-call's commands: stale (how stale), why (why), backfill (rebuild
// what an older builder built, gently). They read the deployment's
// configuration from the same variables the functions read
// (RAIL_LEASE, RAIL_SETTLE_DELAY, RAIL_BRIEF_BUILDER, RAIL_BEDROCK_MODEL_ID,
// RAIL_BACKFILL_RATE); flags override them.

// onCallFlags are the settings a diagnosis is judged with: the deployed
// configuration (lambdafn.LoadOperatorConfig: RAIL_LEASE, RAIL_SETTLE_DELAY,
// RAIL_BRIEF_BUILDER, RAIL_BEDROCK_MODEL_ID, RAIL_BACKFILL_RATE), each
// overridden by its flag when given.
type onCallFlags struct {
	fs      *flag.FlagSet
	op      *opConfig
	settle  *time.Duration
	builder *string
	model   *string
	rate    *string
}

func addOnCallFlags(fs *flag.FlagSet) *onCallFlags {
	return &onCallFlags{
		fs:      fs,
		op:      addOpConfig(fs),
		settle:  fs.Duration("settle", 0, "the trigger's settle delay (default $"+lambdafn.EnvSettleDelay+", else 10s)"),
		builder: fs.String("builder", "", "the deployed builder: extractive, bedrock or digest (default $"+lambdafn.EnvBriefBuilder+", else extractive)"),
		model:   fs.String("model", "", "the deployed Bedrock model id (default $"+lambdafn.EnvBedrockModelID+")"),
		rate: fs.String("rate", "", fmt.Sprintf("backfill builds per minute, more than 0 (default $%s, else %d)",
			lambdafn.EnvBackfillRate, lambdafn.DefaultBackfillRate)),
	}
}

// config resolves the settings after the flags are parsed.
func (o *onCallFlags) config(g *globals) (rail.Config, postgres.OnCallConfig, float64, error) {
	cfg, err := o.op.resolve(g)
	if err != nil {
		return rail.Config{}, postgres.OnCallConfig{}, 0, err
	}
	dep, err := lambdafn.LoadOperatorConfig(g.env)
	if err != nil {
		return rail.Config{}, postgres.OnCallConfig{}, 0, usageError("%v", err)
	}
	var bad error
	o.fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "settle":
			if *o.settle < 0 {
				bad = usageError("--settle=%s: want a duration of 0 or more", *o.settle)
			}
			dep.SettleDelay = *o.settle
		case "builder":
			dep.BriefBuilder = *o.builder
		case "model":
			dep.BedrockModelID = *o.model
		case "rate":
			r, err := lambdafn.ParseBackfillRate(*o.rate)
			if err != nil {
				bad = usageError("--rate: %v", err)
			}
			dep.BackfillRate = r
		}
	})
	if bad != nil {
		return rail.Config{}, postgres.OnCallConfig{}, 0, bad
	}
	id, err := dep.DeployedIdentity()
	if err != nil {
		return rail.Config{}, postgres.OnCallConfig{}, 0, usageError("%v", err)
	}
	return cfg, postgres.OnCallConfig{SettleDelay: dep.SettleDelay, Deployed: id}, dep.BackfillRate, nil
}

// matterErr gives an unknown matter, or another firm's, exit code 5.
func matterErr(err error) error {
	switch {
	case errors.Is(err, rail.ErrUnknownMatter):
		return withCode(exitNotFound, "%v: no such matter (check the matter id)", err)
	case errors.Is(err, rail.ErrFirmMismatch):
		return withCode(exitNotFound, "%v: the matter id exists under another firm (check --firm)", err)
	}
	return err
}

func cmdStale(ctx context.Context, g *globals, args []string) error {
	fs := newFlags(g, "stale", "[--limit N] [--json]")
	limit := fs.Int("limit", 20, "how many matters to list (1-10000)")
	asJSON := fs.Bool("json", false, "print the diagnoses as JSON")
	of := addOnCallFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *limit < 1 || *limit > 10000 {
		return usageError("--limit %d: want 1 to 10000", *limit)
	}
	cfg, oc, _, err := of.config(g)
	if err != nil {
		return err
	}
	pool, err := g.pool(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	list, err := postgres.NewLedger(pool, cfg).Stale(ctx, *limit, oc)
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
	fs := newFlags(g, "why", "--firm F --matter M [--limit N] [--json]")
	mf := addMatterFlags(fs)
	limit := fs.Int("limit", 200, "keep the newest N timeline entries (1-100000)")
	asJSON := fs.Bool("json", false, "print the timeline and verdict as JSON")
	of := addOnCallFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *limit < 1 || *limit > 100000 {
		return usageError("--limit %d: want 1 to 100000", *limit)
	}
	cfg, oc, _, err := of.config(g)
	if err != nil {
		return err
	}
	ref, pool, err := g.openMatter(ctx, mf)
	if err != nil {
		return err
	}
	defer pool.Close()
	rep, err := postgres.NewLedger(pool, cfg).Why(ctx, ref, oc, *limit)
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
	fs := newFlags(g, "backfill", synopsis)
	dry := fs.Bool("dry-run", false, "say how many matters are outdated and how long the backfill takes at the rate; change nothing")
	asJSON := fs.Bool("json", false, "print the status as JSON")
	of := addOnCallFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	switch {
	case sub == "" && !*dry:
		return usageError("backfill needs status, pause, resume or --dry-run")
	case sub != "" && *dry:
		return usageError("--dry-run goes alone: railctl backfill --dry-run")
	case sub != "" && sub != "status" && sub != "pause" && sub != "resume":
		return usageError("backfill %q: want status, pause, resume or --dry-run", sub)
	}
	cfg, oc, rate, err := of.config(g)
	if err != nil {
		return err
	}
	pool, err := g.pool(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	bf := &rail.Backfill{Ledger: postgres.NewLedger(pool, cfg), Deployed: oc.Deployed, Rate: rate}
	switch sub {
	case "pause", "resume":
		by := "railctl"
		if u := os.Getenv("USER"); u != "" {
			by = "railctl:" + u
		}
		changed, err := postgres.SetBackfillPaused(ctx, pool, sub == "pause", by)
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
	eta := time.Duration(st.ETASeconds * float64(time.Second)).Round(time.Second)
	if *dry {
		fmt.Fprintf(g.stdout, "dry run: %d matter(s) outdated against %s; at %g builds/min the backfill takes about %s (%d admissible now; the rest are behind on live demand, quarantined or building). Nothing changed.\n",
			st.Outdated, st.Deployed, st.Rate, eta, st.Admissible)
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
	fmt.Fprintf(w, "in flight\t%d matter(s) with unserved backfill demand\n", st.InFlight)
	fmt.Fprintf(w, "admitted\t%d build(s) in all\n", st.Admitted)
	fmt.Fprintf(w, "time left\tabout %s at the rate\n", eta)
	return w.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
