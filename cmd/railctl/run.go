package main

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pramaan/brief-rail/pkg/brief"
	"github.com/pramaan/brief-rail/pkg/brief/samples"
	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
	"github.com/pramaan/brief-rail/pkg/record"
)

// The quickstart's fixed ids, printed so a person can use them with the
// other commands.
const (
	sampleFirm   = "f1a1f1a1-0000-4000-8000-000000000001"
	sampleMatter = "4a770001-0000-4000-8000-000000000001"
	sampleTitle  = "Harlow Logistics Ltd v. Penmark Freight Inc."
)

// quickstartDocs are the sample PDFs the quickstart uploads: the three with
// a text layer. (The scanned exhibit is left out; upload it by hand to see
// the "no text layer" note.)
var quickstartDocs = []string{samples.ComplaintName, samples.AnswerName, samples.ExhibitAName}

func cmdRun(ctx context.Context, g *globals, args []string) error {
	c := g.flags("run", "[flags]", 0)
	var o railOptions
	addRailFlags(c.FlagSet, &o, 0, 1*time.Second)
	timeout := c.Duration("timeout", 50*time.Second, "give up when the Brief is not current after this long")
	if err := c.parse(args); err != nil {
		return err
	}
	p := newProgress(g.stdout, slog.LevelInfo)
	r, url, stop, err := bootRail(ctx, g, o, p)
	if err != nil {
		return err
	}
	defer stop()
	defer r.Close()

	ref, _ := rail.ParseMatterRef(sampleFirm, sampleMatter)
	p.linef("quickstart", "firm %s, matter %s (%s)", sampleFirm, sampleMatter, sampleTitle)
	events, err := seedQuickstart(ctx, r.pool, ref, p)
	if err != nil {
		return err
	}
	p.linef("quickstart", "waiting for the Brief to reflect all three documents (timeout %s)", *timeout)
	wctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	frame, err := waitForBrief(wctx, r, ref, events)
	if err != nil {
		j, _ := r.ledger.Job(context.WithoutCancel(ctx), ref)
		return fmt.Errorf("the Brief did not become current: %w (requested %d, built %d, %s)", err,
			j.RequestedGeneration, j.BuiltGeneration, j.RunStatus)
	}
	r.Stop() // quiet the rail before printing
	j, err := r.ledger.Job(context.WithoutCancel(ctx), ref)
	if err != nil {
		return err
	}
	fmt.Fprintln(g.stdout)
	printBrief(g.stdout, j, frame)
	fmt.Fprintln(g.stdout, "JOB ROW (ops.matter_frame_jobs)")
	fmt.Fprintf(g.stdout, "  requested %d / target %d / built %d, token (claimed_generation) %d, run_status %s, attempts %d, %s\n",
		j.RequestedGeneration, j.TargetGeneration, j.BuiltGeneration, j.ClaimedGeneration, j.RunStatus, j.Attempts, currentText(j))
	runs, err := r.ledger.Runs(context.WithoutCancel(ctx), ref, 10)
	if err != nil {
		return err
	}
	fmt.Fprintln(g.stdout, "\nRUNS (ops.matter_frame_runs, newest first)")
	printRuns(g, runs)
	fmt.Fprintf(g.stdout, "\nNext: `make serve`, then in another terminal\n  export DATABASE_URL='%s'\n  railctl brief --firm %s --matter %s\n",
		url, sampleFirm, sampleMatter)
	return nil
}

// seedQuickstart creates the sample matter and uploads the three sample
// PDFs, or, when an earlier run already did, asks for a regeneration so
// this run still goes through the whole rail (record.Seed). It returns the
// ids of the facts whose demand the Brief must cover.
func seedQuickstart(ctx context.Context, pool *pgxpool.Pool, ref rail.MatterRef, p *progressHandler) ([]uuid.UUID, error) {
	var files []record.File
	for _, f := range samples.PDFs() {
		if slices.Contains(quickstartDocs, f.Name) {
			files = append(files, record.File{Name: f.Name, Data: f.Data})
		}
	}
	s, err := record.Seed(ctx, pool, ref, sampleTitle, files)
	if err != nil {
		return nil, err
	}
	if s.Created {
		p.linef("quickstart", "matter created")
	}
	if s.Regenerated {
		p.linef("quickstart", "the three documents are already stored (an earlier run): brief.regeneration_requested recorded")
	}
	for _, d := range s.Stored {
		p.linef("upload", "%s: %d page(s) extracted, stored as document %s, document.uploaded recorded", d.Name, d.Pages, d.ID.String()[:8])
	}
	return s.Facts, nil
}

// waitForBrief waits until the trigger has heard every fact, the Brief is
// current (built == requested) and the newest frame lists the three
// documents.
func waitForBrief(ctx context.Context, r *localRail, ref rail.MatterRef, facts []uuid.UUID) (rail.StoredFrame, error) {
	for {
		heard, err := postgres.FactsHeard(ctx, r.pool, facts)
		if err == nil && heard == len(facts) {
			j, jerr := r.ledger.Job(ctx, ref)
			f, found, ferr := r.ledger.LatestFrame(ctx, ref)
			if jerr == nil && ferr == nil && found && j.Current && j.RequestedGeneration > 0 && f.Target == j.BuiltGeneration && listsAll(f.Body) {
				return f, nil
			}
		}
		select {
		case <-ctx.Done():
			return rail.StoredFrame{}, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func listsAll(body []byte) bool {
	b, err := brief.Decode(body)
	if err != nil {
		return false
	}
	var names []string
	for _, d := range b.Documents {
		names = append(names, d.Name)
	}
	for _, want := range quickstartDocs {
		if !slices.Contains(names, want) {
			return false
		}
	}
	return true
}

// cmdRegenerate records brief.regeneration_requested: what the Regenerate
// button does. The rail hears it through the outbox, the bus and the trigger.
func cmdRegenerate(ctx context.Context, g *globals, args []string) error {
	s, err := g.flags("regenerate", "--firm F --matter M", withMatter).open(ctx, args, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	id, err := record.Regenerate(ctx, s.pool, s.ref)
	if err != nil {
		return err
	}
	fmt.Fprintf(g.stdout, "brief.regeneration_requested recorded (event %s); the rail will rebuild matter %s\n", id, s.ref)
	return nil
}
