package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/pramaan/brief-rail/pkg/postgres"
	"github.com/pramaan/brief-rail/pkg/rail"
)

// LoadBuild reads what LoadInputs and ClaimedLatestFrame read, in one
// statement for a matter of up to rail.ManifestPage documents: the same
// title, manifest (every page of it past the first, in id order) and
// newest frame, or none; and a superseded claim reads nothing (ErrFenced).
func TestLoadBuildIsLoadInputsAndTheLatestFrame(t *testing.T) {
	b := setup(t, rail.Config{})
	var trips atomic.Int64
	counted := postgres.NewLedger(countedPool(t, b.db.URL, &trips), rail.Config{})
	check := func(what string, c rail.Claim, wantStatements int64) {
		t.Helper()
		in, err := b.ledger.LoadInputs(b.ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		prev, found, err := b.ledger.ClaimedLatestFrame(b.ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := counted.LoadBuild(b.ctx, c); err != nil { // warm-up: prepare its statements
			t.Fatal(err)
		}
		t0 := trips.Load()
		bin, bprev, bfound, err := counted.LoadBuild(b.ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		if got := trips.Load() - t0; got != wantStatements {
			t.Errorf("%s: LoadBuild took %d round trips; want %d", what, got, wantStatements)
		}
		if bin.Title != in.Title || !reflect.DeepEqual(bin.Manifest, in.Manifest) || bin.Ref != in.Ref {
			t.Fatalf("%s: LoadBuild inputs %q %d docs, LoadInputs %q %d docs", what, bin.Title, len(bin.Manifest), in.Title, len(in.Manifest))
		}
		if bfound != found || !reflect.DeepEqual(bprev, prev) {
			t.Fatalf("%s: LoadBuild frame %v %+v, ClaimedLatestFrame %v %+v", what, bfound, bprev, found, prev)
		}
		if bin.FingerprintFor(rail.BuilderIdentity{Name: "x"}) != in.FingerprintFor(rail.BuilderIdentity{Name: "x"}) {
			t.Fatalf("%s: fingerprints differ", what)
		}
	}
	b.demand(t)
	c := b.mustClaim(t, "w")
	check("no documents, no frame", c, 1)
	b.addDoc(t, "Statement of claim", "page one", "page two")
	b.addDoc(t, "Defence", "page one")
	check("two documents, no frame", c, 1)
	if _, err := b.ledger.Commit(b.ctx, c, frameOf("first")); err != nil {
		t.Fatal(err)
	}
	b.demand(t)
	c = b.mustClaim(t, "w")
	check("two documents and a frame", c, 1)
	if _, err := b.pool.Exec(b.ctx, `INSERT INTO app.documents (firm_id, matter_id, name, pages, content_sha256)
        SELECT $1, $2, 'doc ' || g, ARRAY['page'], encode(sha256(convert_to(g::text, 'UTF8')), 'hex')
        FROM generate_series(1, $3::int) g`, b.ref.FirmID, b.ref.MatterID, rail.ManifestPage); err != nil {
		t.Fatal(err)
	}
	check("two manifest pages", c, 2)
	if _, err := b.pool.Exec(b.ctx, `UPDATE ops.matter_frame_jobs SET claimed_at = claimed_at - interval '1 hour'
        WHERE firm_id = $1 AND matter_id = $2`, b.ref.FirmID, b.ref.MatterID); err != nil {
		t.Fatal(err)
	}
	b.mustClaim(t, "w2")
	if _, _, _, err := b.ledger.LoadBuild(b.ctx, c); !isFenced(err) {
		t.Fatalf("a superseded claim loaded its build: %v", err)
	}
}

// LoadBuilds reads every claim of a batch in one statement, each exactly as
// LoadBuild reads it alone, in the order given; a claim superseded since
// fails the batch's read with ErrFenced.
func TestLoadBuildsReadsABatchAsLoadBuildReadsEach(t *testing.T) {
	b := setup(t, rail.Config{})
	var trips atomic.Int64
	counted := postgres.NewLedger(countedPool(t, b.db.URL, &trips), rail.Config{})
	var claims []rail.Claim
	for i, docs := range []int{0, 1, 3, 2} {
		ref := b.newMatter(t, "matter "+string(rune('A'+i)))
		for d := range docs {
			if _, err := postgres.AddDocument(b.ctx, b.pool, ref, rail.NewDocument{Name: "doc " + string(rune('a'+d)), Pages: []string{"page"}}); err != nil {
				t.Fatal(err)
			}
		}
		demandOn(t, b, ref)
		c := claimOn(t, b, ref)
		if i%2 == 1 { // every other matter has a frame already
			if _, err := b.ledger.Commit(b.ctx, c, frameOf("earlier")); err != nil {
				t.Fatal(err)
			}
			demandOn(t, b, ref)
			c = claimOn(t, b, ref)
		}
		claims = append(claims, c)
	}
	if _, err := counted.LoadBuilds(b.ctx, claims); err != nil { // warm-up: connect, prepare
		t.Fatal(err)
	}
	t0 := trips.Load()
	got, err := counted.LoadBuilds(b.ctx, claims)
	if err != nil {
		t.Fatal(err)
	}
	if n := trips.Load() - t0; n != 1 {
		t.Errorf("LoadBuilds of %d claims took %d round trips; want 1", len(claims), n)
	}
	for i, c := range claims {
		in, prev, found, err := b.ledger.LoadBuild(b.ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		g := got[i]
		if g.Inputs.Ref != c.MatterRef || g.Inputs.Title != in.Title || !reflect.DeepEqual(g.Inputs.Manifest, in.Manifest) ||
			g.Found != found || !reflect.DeepEqual(g.Prev, prev) || (i%2 == 1) != found {
			t.Fatalf("claim %d: batch read %+v / %v %+v; alone %+v / %v %+v", i, g.Inputs, g.Found, g.Prev, in, found, prev)
		}
	}
	// One claim of the batch is superseded: the batch's read is refused.
	if _, err := b.pool.Exec(b.ctx, `UPDATE ops.matter_frame_jobs SET claimed_at = claimed_at - interval '1 hour'
        WHERE firm_id = $1 AND matter_id = $2`, claims[2].FirmID, claims[2].MatterID); err != nil {
		t.Fatal(err)
	}
	claimOn(t, b, claims[2].MatterRef)
	if _, err := b.ledger.LoadBuilds(b.ctx, claims); !isFenced(err) {
		t.Fatalf("a batch holding a superseded claim was read: %v", err)
	}
}

// noBatchReads is a ledger whose batch read always fails.
type noBatchReads struct{ *postgres.Ledger }

func (noBatchReads) LoadBuilds(context.Context, []rail.Claim) ([]rail.Loaded, error) {
	return nil, errors.New("batch read refused (test)")
}

// A batch whose one-statement read fails still builds every claim: each
// build reads its own (LoadBuild), as BuildOnce does.
func TestBuildBatchFallsBackToOneReadPerClaim(t *testing.T) {
	b := setup(t, rail.Config{})
	var items []rail.BatchItem
	for i := range 3 {
		ref := b.newMatter(t, fmt.Sprint("matter ", i))
		demandOn(t, b, ref)
		items = append(items, rail.BatchItem{Ref: ref})
	}
	for _, led := range []rail.Ledger{b.ledger, noBatchReads{b.ledger}} {
		w := &rail.Worker{Ledger: led, Builder: rail.DigestBuilder{}, ID: "w", Heartbeat: -1}
		outs, errs, err := w.BuildBatch(b.ctx, items, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i, o := range outs {
			if errs[i] != nil || !o.Claimed || !o.Landed {
				t.Fatalf("%T: item %d: %+v %v; want landed", led, i, o, errs[i])
			}
		}
		for _, it := range items {
			demandOn(t, b, it.Ref)
		}
	}
}
