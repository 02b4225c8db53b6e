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

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pramaan/brief-rail/pkg/app"
	"github.com/pramaan/brief-rail/pkg/lambdafn"
	"github.com/pramaan/brief-rail/pkg/pgconn"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
	"github.com/pramaan/brief-rail/pkg/record"
	railsql "github.com/pramaan/brief-rail/sql"
)

// pool opens railctl's pool the way the functions open theirs (app.OpenPool):
// --database-url (default $DATABASE_URL), or DB_HOST, DB_USER and
// DB_IAM_AUTH=true for RDS Proxy with IAM tokens. It checks the connection.
func (g *globals) pool(ctx context.Context) (*pgxpool.Pool, error) {
	if g.databaseURL == "" && g.env(pgconn.EnvHost) == "" {
		return nil, usageError("no database: pass --database-url, set DATABASE_URL, or DB_HOST/DB_NAME/DB_USER (DB_IAM_AUTH=true for RDS Proxy)")
	}
	pool, err := app.OpenPool(ctx, railctlEnv(g.env, g.databaseURL, 4))
	if err != nil {
		return nil, usageError("%v", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect: %w", err)
	}
	return pool, nil
}

// matterFlags registers --firm and --matter.
type matterFlags struct{ firm, matter *string }

func addMatterFlags(fs *flag.FlagSet) matterFlags {
	return matterFlags{
		firm:   fs.String("firm", "", "firm id (uuid, required)"),
		matter: fs.String("matter", "", "matter id (uuid, required)"),
	}
}

func (m matterFlags) ref() (rail.MatterRef, error) {
	if *m.firm == "" || *m.matter == "" {
		return rail.MatterRef{}, usageError("--firm and --matter are required")
	}
	ref, err := rail.ParseMatterRef(*m.firm, *m.matter)
	if err != nil {
		return rail.MatterRef{}, usageError("%v", err)
	}
	return ref, nil
}

// openMatter validates --firm/--matter and opens the pool: the start of
// every per-matter command.
func (g *globals) openMatter(ctx context.Context, mf matterFlags) (rail.MatterRef, *pgxpool.Pool, error) {
	ref, err := mf.ref()
	if err != nil {
		return rail.MatterRef{}, nil, err
	}
	pool, err := g.pool(ctx)
	if err != nil {
		return rail.MatterRef{}, nil, err
	}
	return ref, pool, nil
}

func cmdMigrate(ctx context.Context, g *globals, args []string) error {
	fs := newFlags(g, "migrate", "")
	if err := parse(fs, args); err != nil {
		return err
	}
	pool, err := g.pool(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Release()
	v, err := railsql.Migrate(ctx, conn.Conn(), func(name string) { fmt.Fprintf(g.stderr, "applying %s\n", name) })
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
	fs := newFlags(g, "matter "+sub, "--firm F --matter M [--title T]")
	mf := addMatterFlags(fs)
	var title *string
	if sub == "add" {
		title = fs.String("title", "", "matter title")
	}
	if sub != "add" && sub != "close" && sub != "open" {
		return usageError("matter: unknown subcommand %q (want add, close or open)", sub)
	}
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	ref, pool, err := g.openMatter(ctx, mf)
	if err != nil {
		return err
	}
	defer pool.Close()
	switch sub {
	case "add":
		var created bool
		err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			var err error
			created, err = record.CreateMatter(ctx, tx, ref, *title)
			return err
		})
		if err != nil {
			return err
		}
		if created {
			fmt.Fprintf(g.stdout, "matter %s added\n", ref)
		} else {
			fmt.Fprintf(g.stdout, "matter %s already exists\n", ref)
		}
	default:
		status := map[string]string{"close": "closed", "open": "open"}[sub]
		if err := postgres.SetMatterStatus(ctx, pool, ref, status); err != nil {
			return err
		}
		fmt.Fprintf(g.stdout, "matter %s %s\n", ref, status)
	}
	return nil
}

func cmdDoc(ctx context.Context, g *globals, args []string) error {
	if len(args) == 0 || args[0] != "add" {
		return usageError("doc: want the subcommand add")
	}
	fs := newFlags(g, "doc add", "--firm F --matter M --name N --text-file PATH")
	mf := addMatterFlags(fs)
	name := fs.String("name", "", "document name (required)")
	path := fs.String("text-file", "", "UTF-8 text file; pages separated by form feeds (required)")
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	ref, err := mf.ref()
	if err != nil {
		return err
	}
	if *name == "" || *path == "" {
		return usageError("--name and --text-file are required")
	}
	raw, err := os.ReadFile(*path)
	if err != nil {
		return fmt.Errorf("read text file: %w", err)
	}
	pages := strings.Split(string(raw), "\f")
	pool, err := g.pool(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	var id string
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		docID, err := record.AddDocument(ctx, tx, ref, rail.NewDocument{Name: *name, Pages: pages})
		id = docID.String()
		return err
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(g.stdout, "document %s stored (%d pages)\n", id, len(pages))
	return nil
}

func cmdDemand(ctx context.Context, g *globals, args []string) error {
	fs := newFlags(g, "demand", "--firm F --matter M")
	mf := addMatterFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	ref, pool, err := g.openMatter(ctx, mf)
	if err != nil {
		return err
	}
	defer pool.Close()
	res, err := postgres.NewLedger(pool, rail.Config{}).Demand(ctx, ref, 1)
	if err != nil {
		return err
	}
	fmt.Fprintf(g.stdout, "demand recorded: requested_generation=%d run_status=%s\n", res.Requested, res.Status)
	return nil
}

func cmdBuild(ctx context.Context, g *globals, args []string) error {
	fs := newFlags(g, "build", "--firm F --matter M [--lease D] [--max-attempts N] [--stall D] [--worker ID]")
	mf := addMatterFlags(fs)
	oc := addOpConfig(fs)
	stall := fs.Duration("stall", 0, "pause the worker entirely (no heartbeats) just before its commit")
	worker := fs.String("worker", defaultWorkerID(), "worker id recorded on the claim")
	builderName := fs.String("builder", app.BuilderDigest, "frame builder: "+strings.Join(app.BuilderNames(), ", "))
	if err := parse(fs, args); err != nil {
		return err
	}
	ref, err := mf.ref()
	if err != nil {
		return err
	}
	fb, err := app.NewFrameBuilder(ctx, *builderName, app.BuilderOptions{BedrockModelID: os.Getenv("RAIL_BEDROCK_MODEL_ID")})
	if err != nil {
		return usageError("%v", err)
	}
	cfg, err := oc.resolve(g)
	if err != nil {
		return err
	}
	pool, err := g.pool(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	ledger := postgres.NewLedger(pool, cfg)
	if _, err := ledger.Job(ctx, ref); err != nil { // unknown or misfiled matter: a clear error
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
	out, err := w.BuildOnce(ctx, ref)
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
	fs := newFlags(g, "status", "--firm F --matter M [--json] [--lease D] [--max-attempts N]")
	mf := addMatterFlags(fs)
	asJSON := fs.Bool("json", false, "print the row as JSON (keys are the column names)")
	oc := addOpConfig(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	cfg, err := oc.resolve(g)
	if err != nil {
		return err
	}
	ref, pool, err := g.openMatter(ctx, mf)
	if err != nil {
		return err
	}
	defer pool.Close()
	ledger := postgres.NewLedger(pool, cfg)
	j, err := ledger.Job(ctx, ref)
	if err != nil {
		return err
	}
	// Freshness as on-call's commands judge it: the state, and whether the
	// frame was built by the deployed builder ($RAIL_BRIEF_BUILDER).
	dep, err := lambdafn.LoadOperatorConfig(g.env)
	if err != nil {
		return usageError("%v", err)
	}
	id, err := dep.DeployedIdentity()
	if err != nil {
		return usageError("%v", err)
	}
	d, err := ledger.Diagnose(ctx, ref, postgres.OnCallConfig{SettleDelay: dep.SettleDelay, Deployed: id})
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
		lease := cfg.Lease
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
	fs := newFlags(g, "runs", "--firm F --matter M [--limit N] [--json]")
	mf := addMatterFlags(fs)
	limit := fs.Int("limit", 20, "how many attempts, newest first")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	ref, pool, err := g.openMatter(ctx, mf)
	if err != nil {
		return err
	}
	defer pool.Close()
	runs, err := postgres.NewLedger(pool, rail.Config{}).Runs(ctx, ref, *limit)
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

func cmdSweep(ctx context.Context, g *globals, args []string) error {
	fs := newFlags(g, "sweep", "[--lease D] [--max-attempts N] [--json]")
	oc := addOpConfig(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	cfg, err := oc.resolve(g)
	if err != nil {
		return err
	}
	pool, err := g.pool(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	rep, err := postgres.NewLedger(pool, cfg).Sweep(ctx, 0)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(g.stdout).Encode(rep)
	}
	fmt.Fprintf(g.stdout, "quarantined now: %d\nlease expiries noted: %d\nunserved demand to re-nudge: %d\n",
		len(rep.Quarantined), rep.LeaseExpiries, len(rep.Renudge))
	for _, r := range rep.Renudge {
		fmt.Fprintf(g.stdout, "  renudge %s\n", r)
	}
	fmt.Fprintf(g.stdout, "matters behind: %d, quarantined: %d, oldest unserved demand: %.0fs, closed with demand held: %d\n",
		rep.MattersBehind, rep.MattersQuarantined, rep.OldestUnservedDemandSeconds, rep.MattersClosedWithDemand)
	return nil
}

func cmdRelease(ctx context.Context, g *globals, args []string) error {
	fs := newFlags(g, "release", "--firm F --matter M")
	mf := addMatterFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	ref, pool, err := g.openMatter(ctx, mf)
	if err != nil {
		return err
	}
	defer pool.Close()
	ledger := postgres.NewLedger(pool, rail.Config{})
	if _, err := ledger.Job(ctx, ref); err != nil {
		return err
	}
	ok, err := ledger.Release(ctx, ref)
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("matter is not quarantined")
	}
	fmt.Fprintf(g.stdout, "matter %s released; the sweeper will nudge its unserved demand\n", ref)
	return nil
}
