package postgres_test

import (
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
