package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pramaan/brief-rail/pkg/rail"
)

// The record the Brief is built from: firms, matters and documents. These
// writers take the caller's transaction so that a fact about the record
// (the outbox) commits with it.

// EnsureFirm creates the firm if it does not exist.
func EnsureFirm(ctx context.Context, q Querier, firmID uuid.UUID, name string) error {
	_, err := q.Exec(ctx, `INSERT INTO app.firms (firm_id, name) VALUES ($1, $2)
        ON CONFLICT (firm_id) DO NOTHING`, firmID, name)
	if err != nil {
		return fmt.Errorf("ensure firm %s: %w", firmID, err)
	}
	return nil
}

// AddMatter creates an open matter (and its firm, if new). Adding a matter
// that already exists under the same firm is not an error (created=false);
// a matter id already used by another firm is ErrFirmMismatch.
func AddMatter(ctx context.Context, q Querier, ref rail.MatterRef, title string) (created bool, err error) {
	if err := EnsureFirm(ctx, q, ref.FirmID, ""); err != nil {
		return false, err
	}
	tag, err := q.Exec(ctx, `INSERT INTO app.matters (firm_id, matter_id, title) VALUES ($1, $2, $3)
        ON CONFLICT DO NOTHING`, ref.FirmID, ref.MatterID, title)
	if err != nil {
		return false, fmt.Errorf("add matter %s: %w", ref, err)
	}
	if tag.RowsAffected() == 1 {
		return true, nil
	}
	var firm uuid.UUID
	if err := q.QueryRow(ctx, `SELECT firm_id FROM app.matters WHERE matter_id = $1`, ref.MatterID).Scan(&firm); err != nil {
		return false, fmt.Errorf("add matter %s: %w", ref, err)
	}
	if firm != ref.FirmID {
		return false, fmt.Errorf("add matter %s: %w", ref, rail.ErrFirmMismatch)
	}
	return false, nil
}

// SetMatterStatus opens or closes a matter.
//
// A closed matter gets no builds and no new documents, but its ledger row
// keeps what was recorded and keeps recording: demand already requested
// stays requested, and demand that arrives while it is closed (a fact in
// flight at the close) is recorded too (Demand reports it Held); all of it
// is held, counted by Gauges.MattersClosedWithDemand rather than as late.
// A build already claimed may still land (its commit does not
// look at the matter's status: the frame reflects inputs read while the
// matter was open). Re-opening restarts the demand clock of held demand
// (demand_since and uncovered_since become the re-opening's time), so the
// oldest-unserved gauge counts it from the moment the rail is responsible
// for it again; the sweeper's next pass re-nudges it (it lists open matters
// with unserved demand and no live claim). Both happen in one statement.
func SetMatterStatus(ctx context.Context, q Querier, ref rail.MatterRef, status string) error {
	if status != "open" && status != "closed" {
		return fmt.Errorf("matter status %q: want open or closed", status)
	}
	var changed int
	err := q.QueryRow(ctx, `
WITH m AS (
    UPDATE app.matters SET status = $3 WHERE firm_id = $1 AND matter_id = $2
    RETURNING firm_id, matter_id
), old AS (
    SELECT status FROM app.matters WHERE firm_id = $1 AND matter_id = $2
), reopened AS (
    UPDATE ops.matter_frame_jobs j SET
        demand_since    = CASE WHEN j.demand_since IS NOT NULL THEN clock_timestamp() END,
        uncovered_since = CASE WHEN j.uncovered_since IS NOT NULL THEN clock_timestamp() END
    FROM m, old
    WHERE j.firm_id = m.firm_id AND j.matter_id = m.matter_id AND $3 = 'open' AND old.status = 'closed'
)
SELECT count(*) FROM m`, ref.FirmID, ref.MatterID, status).Scan(&changed)
	if err != nil {
		return fmt.Errorf("set matter status %s: %w", ref, err)
	}
	if changed == 0 {
		return matterError(ctx, q, ref)
	}
	return nil
}

// matterError explains why a matter could not be found under a firm.
func matterError(ctx context.Context, q Querier, ref rail.MatterRef) error {
	var firm uuid.UUID
	err := q.QueryRow(ctx, `SELECT firm_id FROM app.matters WHERE matter_id = $1`, ref.MatterID).Scan(&firm)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("matter %s: %w", ref, rail.ErrUnknownMatter)
	case err != nil:
		return fmt.Errorf("matter %s: %w", ref, err)
	case firm != ref.FirmID:
		return fmt.Errorf("matter %s: %w", ref, rail.ErrFirmMismatch)
	}
	return fmt.Errorf("matter %s: not changed", ref)
}

// AddDocument stores a document on an open matter of the given firm, in the
// caller's transaction. It returns the stored document's id.
func AddDocument(ctx context.Context, q Querier, ref rail.MatterRef, d rail.NewDocument) (uuid.UUID, error) {
	if err := d.Validate(); err != nil {
		return uuid.Nil, fmt.Errorf("add document: %w", err)
	}
	if d.ID == uuid.Nil {
		d.ID = uuid.New()
	}
	if d.SHA256 == "" {
		d.SHA256 = rail.PagesSHA256(d.Pages)
	}
	if d.Pages == nil {
		d.Pages = []string{}
	}
	var status string
	err := q.QueryRow(ctx, `SELECT status FROM app.matters WHERE firm_id = $1 AND matter_id = $2 FOR SHARE`,
		ref.FirmID, ref.MatterID).Scan(&status)
	if errors.Is(err, pgx.ErrNoRows) {
		return uuid.Nil, fmt.Errorf("add document: %w", matterError(ctx, q, ref))
	}
	if err != nil {
		return uuid.Nil, fmt.Errorf("add document: %w", err)
	}
	if status != "open" {
		return uuid.Nil, fmt.Errorf("add document to %s: %w", ref, rail.ErrMatterClosed)
	}
	_, err = q.Exec(ctx, `INSERT INTO app.documents (document_id, firm_id, matter_id, name, pages, content_sha256, note)
        VALUES ($1, $2, $3, $4, $5, $6, $7)`, d.ID, ref.FirmID, ref.MatterID, strings.TrimSpace(d.Name),
		d.Pages, strings.ToLower(d.SHA256), d.Note)
	if err != nil {
		return uuid.Nil, fmt.Errorf("add document to %s: %w", ref, err)
	}
	return d.ID, nil
}

// DocumentNames lists the names of a matter's documents (none for a
// matter that does not exist).
func DocumentNames(ctx context.Context, q Querier, ref rail.MatterRef) ([]string, error) {
	rows, err := q.Query(ctx, `SELECT name FROM app.documents WHERE firm_id = $1 AND matter_id = $2 ORDER BY name`,
		ref.FirmID, ref.MatterID)
	if err != nil {
		return nil, fmt.Errorf("document names %s: %w", ref, err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("document names %s: %w", ref, err)
	}
	return names, nil
}

// LoadInputs reads a matter's title and document manifest (no text) in
// keyset pages of ManifestPage rows by document id.
func LoadInputs(ctx context.Context, q Querier, ref rail.MatterRef) (rail.Inputs, error) {
	var in rail.Inputs
	var title string
	var manifest []rail.DocumentMeta
	err := q.QueryRow(ctx, `SELECT title FROM app.matters WHERE firm_id = $1 AND matter_id = $2`,
		ref.FirmID, ref.MatterID).Scan(&title)
	if errors.Is(err, pgx.ErrNoRows) {
		return in, fmt.Errorf("load inputs: %w", matterError(ctx, q, ref))
	}
	if err != nil {
		return in, fmt.Errorf("load inputs %s: %w", ref, err)
	}
	after := uuid.Nil
	for {
		rows, err := q.Query(ctx, `SELECT document_id, name, content_sha256, page_count, uploaded_at
            FROM app.documents WHERE firm_id = $1 AND matter_id = $2 AND document_id > $3
            ORDER BY document_id LIMIT $4`, ref.FirmID, ref.MatterID, after, rail.ManifestPage)
		if err != nil {
			return in, fmt.Errorf("load inputs %s: %w", ref, err)
		}
		page, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (rail.DocumentMeta, error) {
			var d rail.DocumentMeta
			err := r.Scan(&d.ID, &d.Name, &d.SHA256, &d.PageCount, &d.UploadedAt)
			return d, err
		})
		if err != nil {
			return in, fmt.Errorf("load inputs %s: %w", ref, err)
		}
		manifest = append(manifest, page...)
		if len(page) < rail.ManifestPage {
			return rail.InputsFrom(ref, title, manifest, documentSource{q}), nil
		}
		after = page[len(page)-1].ID
	}
}

// documentSource reads a manifest's documents one statement each.
type documentSource struct{ q Querier }

func (s documentSource) ReadDocument(ctx context.Context, ref rail.MatterRef, id uuid.UUID) (rail.Document, bool, error) {
	d := rail.Document{ID: id}
	err := s.q.QueryRow(ctx, `SELECT name, pages, content_sha256, note, uploaded_at FROM app.documents
                WHERE document_id = $1 AND firm_id = $2 AND matter_id = $3`, id, ref.FirmID, ref.MatterID).
		Scan(&d.Name, &d.Pages, &d.SHA256, &d.Note, &d.UploadedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return rail.Document{}, false, nil
	}
	if err != nil {
		return rail.Document{}, false, err
	}
	return d, true, nil
}

// errNotClaimed is the SQLSTATE the claimed_* read functions raise when the
// token is not the matter's current running claim.
const errNotClaimed = "BR001"

// claimedReadError maps a claimed read's refusal to rail.ErrFenced.
func claimedReadError(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == errNotClaimed {
		return fmt.Errorf("%w (the token no longer grants reads)", rail.ErrFenced)
	}
	return err
}

// LoadClaimedInputs is LoadInputs for a builder holding claim c: the title,
// the manifest and each document are read through the database's claimed_*
// functions (the builder role has no SELECT on app.documents), which answer
// only while c's token is the matter's current running claim. Same
// statements per build as LoadInputs: one for the title, one per manifest
// page, one per document.
func LoadClaimedInputs(ctx context.Context, q Querier, c rail.Claim) (rail.Inputs, error) {
	ref := c.MatterRef
	var title *string
	err := q.QueryRow(ctx, `SELECT ops.claimed_matter_title($1, $2, $3)`, ref.FirmID, ref.MatterID, c.Token).Scan(&title)
	if err != nil {
		return rail.Inputs{}, fmt.Errorf("load inputs %s token %d: %w", ref, c.Token, claimedReadError(err))
	}
	manifest, err := claimedManifest(ctx, q, c, nil)
	if err != nil {
		return rail.Inputs{}, err
	}
	t := ""
	if title != nil {
		t = *title
	}
	return rail.InputsFrom(ref, t, manifest, claimedDocumentSource{q: q, token: c.Token}), nil
}

// claimedManifest reads c's manifest on from the last document of
// manifest (from the start when it is empty), one statement per page of
// rail.ManifestPage, and returns manifest with the rest appended.
func claimedManifest(ctx context.Context, q Querier, c rail.Claim, manifest []rail.DocumentMeta) ([]rail.DocumentMeta, error) {
	ref := c.MatterRef
	after := uuid.Nil
	if len(manifest) > 0 {
		after = manifest[len(manifest)-1].ID
	}
	for {
		rows, err := q.Query(ctx, `SELECT document_id, name, content_sha256, page_count, uploaded_at
            FROM ops.claimed_document_manifest($1, $2, $3, $4, $5)`, ref.FirmID, ref.MatterID, c.Token, after, rail.ManifestPage)
		if err != nil {
			return nil, fmt.Errorf("load inputs %s token %d: %w", ref, c.Token, claimedReadError(err))
		}
		page, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (rail.DocumentMeta, error) {
			var d rail.DocumentMeta
			err := r.Scan(&d.ID, &d.Name, &d.SHA256, &d.PageCount, &d.UploadedAt)
			return d, err
		})
		if err != nil {
			return nil, fmt.Errorf("load inputs %s token %d: %w", ref, c.Token, claimedReadError(err))
		}
		manifest = append(manifest, page...)
		if len(page) < rail.ManifestPage {
			return manifest, nil
		}
		after = page[len(page)-1].ID
	}
}

// loadBuildsSQL reads what each claim of a batch ($1, $2, $3: parallel
// arrays of firm ids, matter ids and tokens) builds from, in one
// statement and one call of ops.claimed_builds (it checks every token
// first, refusing the whole batch when one is not its matter's current
// running claim): the title, the first manifest page ($4 rows) and the
// newest frame (NULLs when there is none), one row per claim in the order
// given.
const loadBuildsSQL = `
SELECT b.title, b.ids, b.names, b.shas, b.pages, b.uploaded,
       b.frame_id, b.token, b.target_generation, b.fingerprint, b.builder, b.model_invoked,
       b.built_at, b.body, b.builder_version, b.model_id, b.prompt_hash
FROM ops.claimed_builds($1::text[]::uuid[], $2::text[]::uuid[], $3::int8[], $4) AS b
ORDER BY b.ord`

// LoadBuild is LoadInputs and ClaimedLatestFrame in one statement (and
// one more per further manifest page, for a matter of more than
// rail.ManifestPage documents): what a build reads before it decides
// whether to call the model.
func (l *Ledger) LoadBuild(ctx context.Context, c rail.Claim) (rail.Inputs, rail.StoredFrame, bool, error) {
	bs, err := l.LoadBuilds(ctx, []rail.Claim{c})
	if err != nil {
		return rail.Inputs{}, rail.StoredFrame{}, false, err
	}
	return bs[0].Inputs, bs[0].Prev, bs[0].Found, nil
}

// LoadBuilds is LoadBuild for every claim of a batch in one statement
// (plus one per further manifest page of a matter of more than
// rail.ManifestPage documents), in the order given. A claim that no
// longer holds its matter fails the whole statement with ErrFenced (the
// caller then reads claim by claim).
func (l *Ledger) LoadBuilds(ctx context.Context, claims []rail.Claim) ([]rail.Loaded, error) {
	if len(claims) == 0 {
		return nil, nil
	}
	firms, matters, tokens := make([]string, len(claims)), make([]string, len(claims)), make([]int64, len(claims))
	for i, c := range claims {
		firms[i], matters[i], tokens[i] = c.FirmID.String(), c.MatterID.String(), c.Token
	}
	what := fmt.Sprintf("load build %s token %d", claims[0].MatterRef, claims[0].Token)
	if len(claims) > 1 {
		what = fmt.Sprintf("load the builds of %d claims", len(claims))
	}
	rows, err := l.q.Query(ctx, loadBuildsSQL, firms, matters, tokens, rail.ManifestPage)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, claimedReadError(err))
	}
	defer rows.Close()
	out := make([]rail.Loaded, 0, len(claims))
	var (
		titles    []string
		manifests [][]rail.DocumentMeta
	)
	for rows.Next() {
		if len(out) == len(claims) {
			return nil, fmt.Errorf("%s: more rows than claims", what)
		}
		var (
			title                       *string
			ids, names, shas            []string
			pages                       []int32
			uploaded                    []time.Time
			frameID                     *uuid.UUID
			token, target               *int64
			fp, builder, ver, model, ph *string
			invoked                     *bool
			builtAt                     *time.Time
			body                        []byte
		)
		if err := rows.Scan(&title, &ids, &names, &shas, &pages, &uploaded,
			&frameID, &token, &target, &fp, &builder, &invoked, &builtAt, &body, &ver, &model, &ph); err != nil {
			return nil, fmt.Errorf("%s: %w", what, claimedReadError(err))
		}
		if len(names) != len(ids) || len(shas) != len(ids) || len(pages) != len(ids) || len(uploaded) != len(ids) {
			return nil, fmt.Errorf("%s: manifest columns of unequal length", what)
		}
		var manifest []rail.DocumentMeta // nil when empty, as LoadInputs's
		for i := range ids {
			id, err := uuid.Parse(ids[i])
			if err != nil {
				return nil, fmt.Errorf("%s: %w", what, err)
			}
			manifest = append(manifest, rail.DocumentMeta{ID: id, Name: names[i], SHA256: shas[i], PageCount: int(pages[i]), UploadedAt: uploaded[i]})
		}
		titles, manifests = append(titles, deref(title)), append(manifests, manifest)
		var ld rail.Loaded
		if frameID != nil {
			ld.Found = true
			ld.Prev = rail.StoredFrame{FrameID: *frameID, Token: *token, Target: *target, Fingerprint: deref(fp), Builder: deref(builder),
				ModelInvoked: invoked != nil && *invoked, Body: body,
				Identity: rail.BuilderIdentity{Name: deref(builder), Version: deref(ver), ModelID: deref(model), PromptHash: deref(ph)}}
			if builtAt != nil {
				ld.Prev.BuiltAt = *builtAt
			}
		}
		out = append(out, ld)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, claimedReadError(err))
	}
	rows.Close()
	if len(out) != len(claims) {
		return nil, fmt.Errorf("%s: %d rows for %d claims", what, len(out), len(claims))
	}
	for i, c := range claims {
		if len(manifests[i]) == rail.ManifestPage {
			if manifests[i], err = claimedManifest(ctx, l.pool, c, manifests[i]); err != nil {
				return nil, err
			}
		}
		out[i].Inputs = rail.InputsFrom(c.MatterRef, titles[i], manifests[i], claimedDocumentSource{q: l.pool, token: c.Token})
	}
	return out, nil
}

// claimedDocumentSource reads a claim's documents one statement each,
// through ops.claimed_document.
type claimedDocumentSource struct {
	q     Querier
	token int64
}

func (s claimedDocumentSource) ReadDocument(ctx context.Context, ref rail.MatterRef, id uuid.UUID) (rail.Document, bool, error) {
	d := rail.Document{ID: id}
	err := s.q.QueryRow(ctx, `SELECT name, pages, content_sha256, note, uploaded_at
        FROM ops.claimed_document($1, $2, $3, $4)`, ref.FirmID, ref.MatterID, s.token, id).
		Scan(&d.Name, &d.Pages, &d.SHA256, &d.Note, &d.UploadedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return rail.Document{}, false, nil
	}
	if err != nil {
		return rail.Document{}, false, claimedReadError(err)
	}
	return d, true, nil
}

// ClaimedLatestFrame is LatestFrame for the builder holding c (rail.Ledger):
// the frame is read through ops.claimed_latest_frame, which answers only
// while c's token is the matter's current running claim (the builder role
// reads no frame body otherwise). One statement.
func (l *Ledger) ClaimedLatestFrame(ctx context.Context, c rail.Claim) (f rail.StoredFrame, found bool, err error) {
	err = l.q.QueryRow(ctx, `SELECT frame_id, token, target_generation, fingerprint, builder, model_invoked,
            built_at, body, builder_version, model_id, prompt_hash
        FROM ops.claimed_latest_frame($1, $2, $3)`, c.FirmID, c.MatterID, c.Token).
		Scan(&f.FrameID, &f.Token, &f.Target, &f.Fingerprint, &f.Builder, &f.ModelInvoked, &f.BuiltAt, &f.Body,
			&f.Identity.Version, &f.Identity.ModelID, &f.Identity.PromptHash)
	f.Identity.Name = f.Builder
	if errors.Is(err, pgx.ErrNoRows) {
		return rail.StoredFrame{}, false, nil
	}
	if err != nil {
		return rail.StoredFrame{}, false, fmt.Errorf("latest frame %s token %d: %w", c.MatterRef, c.Token, claimedReadError(err))
	}
	return f, true, nil
}
