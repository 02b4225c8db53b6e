package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/pramaan/brief-rail/pkg/rail"
)

// The trigger's inbox (rail.Inbox) and the backfill's admission
// (rail.BackfillLedger) are transactions on the ledger: their rows and the
// demand they record commit together. ledgerTx is both.

// BeginInbox starts a trigger transaction (rail.Inbox).
func (l *Ledger) BeginInbox(ctx context.Context) (rail.InboxTx, error) {
	return l.begin(ctx)
}

// BeginBackfill starts a backfill admission transaction (rail.BackfillLedger).
func (l *Ledger) BeginBackfill(ctx context.Context) (rail.BackfillTx, error) {
	return l.begin(ctx)
}

func (l *Ledger) begin(ctx context.Context) (*ledgerTx, error) {
	tx, err := l.pool.Begin(ctx)
	if err != nil {
		return nil, err
	}
	return &ledgerTx{tx: tx, l: l.On(tx)}, nil
}

// ledgerTx is a transaction with the ledger's statements on it (Ledger.On).
type ledgerTx struct {
	tx pgx.Tx
	l  *Ledger
}

func (t *ledgerTx) DemandFrom(ctx context.Context, ref rail.MatterRef, n int, o rail.DemandOrigin) (rail.DemandResult, error) {
	return t.l.DemandFrom(ctx, ref, n, o)
}

func (t *ledgerTx) Commit(ctx context.Context) error   { return t.tx.Commit(ctx) }
func (t *ledgerTx) Rollback(ctx context.Context) error { return t.tx.Rollback(ctx) }

// inboxSQL verifies and records one matter's demand facts ($1 event ids,
// $4 names; $2, $3 the matter). A fact is confirmed when the outbox holds
// it: the same event id with this firm, matter and name (the relay puts
// nothing else on the bus). A confirmed fact is inserted; on an event id
// already in the inbox the DO UPDATE (a no-op write) fires only for the
// same firm, matter and name, so the row comes back as a duplicate; for
// any other it does not, and the fact is a conflict. DO UPDATE reads the
// newest committed row under its lock, so a concurrent redelivery is a
// duplicate, never a conflict. xmax is 0 only on a row this statement
// inserted. A fact the outbox no longer holds (pruned after publication)
// but the inbox does, with the same four, is a duplicate too: a redrive
// after the outbox's retention still dedupes.
const inboxSQL = `
WITH e AS (
    SELECT x.event_id::uuid AS event_id, x.event_name
    FROM ROWS FROM (pg_catalog.unnest($1::text[]), pg_catalog.unnest($4::text[])) AS x (event_id, event_name)
), v AS (
    SELECT e.event_id, e.event_name, EXISTS (
        SELECT 1 FROM ops.domain_event_outbox o
        WHERE o.event_id = e.event_id AND o.firm_id = $2 AND o.matter_id = $3 AND o.event_name = e.event_name
    ) AS confirmed
    FROM e
), ins AS (
    INSERT INTO ops.trigger_inbox AS i (event_id, firm_id, matter_id, event_name)
    SELECT v.event_id, $2, $3, v.event_name FROM v WHERE v.confirmed
    ORDER BY v.event_id
    ON CONFLICT (event_id) DO UPDATE SET received_at = i.received_at
        WHERE (i.firm_id, i.matter_id, i.event_name) = (EXCLUDED.firm_id, EXCLUDED.matter_id, EXCLUDED.event_name)
    RETURNING i.event_id, i.xmax::text = '0' AS inserted
)
SELECT v.event_id::text,
       CASE WHEN ins.inserted THEN 'fresh'
            WHEN ins.event_id IS NOT NULL THEN 'duplicate'
            WHEN v.confirmed THEN '` + rail.RefusedConflict + `'
            WHEN EXISTS (SELECT 1 FROM ops.trigger_inbox i
                         WHERE i.event_id = v.event_id AND (i.firm_id, i.matter_id, i.event_name) = ($2, $3, v.event_name))
                THEN 'duplicate'
            ELSE '` + rail.RefusedUnconfirmed + `' END
FROM v LEFT JOIN ins ON ins.event_id = v.event_id`

// Receive verifies the facts, inserts the inbox rows of those not seen
// before and returns their ids, and the facts refused (rail.InboxTx). One
// statement.
func (t *ledgerTx) Receive(ctx context.Context, ref rail.MatterRef, eventIDs []uuid.UUID, names []string) ([]uuid.UUID, []rail.RefusedFact, error) {
	rows, err := t.tx.Query(ctx, inboxSQL, idStrings(eventIDs), ref.FirmID, ref.MatterID, names) // exec mode has no uuid[] encode plan
	if err != nil {
		return nil, nil, err
	}
	var (
		fresh   []uuid.UUID
		refused []rail.RefusedFact
		id      string
		verdict string
	)
	_, err = pgx.ForEachRow(rows, []any{&id, &verdict}, func() error {
		u, err := uuid.Parse(id)
		if err != nil {
			return err
		}
		switch verdict {
		case "fresh":
			fresh = append(fresh, u)
		case "duplicate":
		default:
			refused = append(refused, rail.RefusedFact{EventID: u, Reason: verdict})
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return fresh, refused, nil
}

// FactsHeard counts how many of the facts with these event ids the trigger
// has received (its inbox; rows are pruned after RAIL_INBOX_RETENTION).
func FactsHeard(ctx context.Context, q Querier, eventIDs []uuid.UUID) (int, error) {
	var n int
	if err := q.QueryRow(ctx, `SELECT count(*) FROM ops.trigger_inbox WHERE event_id = ANY($1::uuid[])`,
		idStrings(eventIDs)).Scan(&n); err != nil {
		return 0, fmt.Errorf("facts heard: %w", err)
	}
	return n, nil
}

// pruneInboxSQL: $1 the retention in seconds, $2 the most rows to delete.
// The cutoff is a scalar subquery, evaluated once: written bare,
// clock_timestamp() - interval is volatile, so it is no index condition
// and the ordered scan reads every retained row to find none old enough
// (TestRetentionPassesCostNothingWhenNothingIsOld).
const pruneInboxSQL = `DELETE FROM ops.trigger_inbox WHERE event_id IN (
        SELECT event_id FROM ops.trigger_inbox
        WHERE received_at < (SELECT clock_timestamp() - make_interval(secs => $1))
        ORDER BY received_at LIMIT $2)`

// PruneInbox deletes up to limit inbox rows received longer than retention
// ago (by the database clock) and returns how many it deleted.
func PruneInbox(ctx context.Context, q Querier, retention time.Duration, limit int) (int64, error) {
	if retention <= 0 {
		return 0, fmt.Errorf("prune inbox: retention must be positive, got %s", retention)
	}
	if limit <= 0 {
		limit = 10000
	}
	tag, err := q.Exec(ctx, pruneInboxSQL, retention.Seconds(), limit)
	if err != nil {
		return 0, fmt.Errorf("prune inbox: %w", err)
	}
	return tag.RowsAffected(), nil
}

// receiveBatchSQL records a trigger batch: one call of ops.receive_facts
// (migration 028), parallel arrays of event id, firm, matter, name and
// trace header.
const receiveBatchSQL = `SELECT r_event_id::text, r_verdict, r_firm_id::text, r_matter_id::text,
       r_status, r_requested_generation, r_run_status
FROM ops.receive_facts($1, $2, $3, $4, $5)`

// ReceiveBatch records a whole trigger batch in one statement
// (rail.BatchInbox): every fact verified and recorded as Receive does, and
// for each matter with new facts one demand, committed together. On any
// error nothing is written.
func (l *Ledger) ReceiveBatch(ctx context.Context, facts []rail.ReceivedFact) (rail.BatchReceipt, error) {
	n := len(facts)
	ids, firms, matters, names, traces := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	for i, f := range facts {
		ids[i], firms[i], matters[i] = f.EventID.String(), f.Ref.FirmID.String(), f.Ref.MatterID.String()
		names[i], traces[i] = f.Name, f.TraceHeader
	}
	rows, err := l.q.Query(ctx, receiveBatchSQL, ids, firms, matters, names, traces)
	if err != nil {
		return rail.BatchReceipt{}, fmt.Errorf("receive batch: %w", err)
	}
	rc := rail.BatchReceipt{Verdicts: make(map[rail.FactKey]string, n), Demands: map[rail.MatterRef]rail.DemandResult{}}
	var (
		id, firm, matter  *string
		verdict           string
		status, runStatus *string
		requested         *int64
	)
	_, err = pgx.ForEachRow(rows, []any{&id, &verdict, &firm, &matter, &status, &requested, &runStatus}, func() error {
		if firm == nil || matter == nil {
			return fmt.Errorf("a row with no firm or matter")
		}
		f, err := uuid.Parse(*firm)
		if err != nil {
			return err
		}
		m, err := uuid.Parse(*matter)
		if err != nil {
			return err
		}
		ref := rail.MatterRef{FirmID: f, MatterID: m}
		if id != nil {
			u, err := uuid.Parse(*id)
			if err != nil {
				return err
			}
			rc.Verdicts[rail.FactKey{Ref: ref, EventID: u}] = verdict
			return nil
		}
		if status == nil || requested == nil || runStatus == nil {
			return fmt.Errorf("a demand row with a null column")
		}
		rc.Demands[ref] = rail.DemandResult{Requested: *requested, Status: *runStatus, Held: *status != "open"}
		return nil
	})
	if err != nil {
		return rail.BatchReceipt{}, fmt.Errorf("receive batch: %w", err)
	}
	return rc, nil
}
