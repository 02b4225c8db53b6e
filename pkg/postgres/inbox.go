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

const inboxSQL = `
INSERT INTO ops.trigger_inbox (event_id, firm_id, matter_id, event_name)
SELECT e.event_id::uuid, $2, $3, e.event_name
FROM unnest($1::text[], $4::text[]) AS e (event_id, event_name)
ORDER BY e.event_id::uuid
ON CONFLICT (event_id) DO NOTHING
RETURNING event_id`

// Receive inserts the facts' inbox rows and returns the event ids not seen
// before. One statement.
func (t *ledgerTx) Receive(ctx context.Context, ref rail.MatterRef, eventIDs []uuid.UUID, names []string) ([]uuid.UUID, error) {
	rows, err := t.tx.Query(ctx, inboxSQL, idStrings(eventIDs), ref.FirmID, ref.MatterID, names) // exec mode has no uuid[] encode plan
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
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

// PruneInbox deletes up to limit inbox rows received longer than retention
// ago (by the database clock) and returns how many it deleted.
func PruneInbox(ctx context.Context, q Querier, retention time.Duration, limit int) (int64, error) {
	if retention <= 0 {
		return 0, fmt.Errorf("prune inbox: retention must be positive, got %s", retention)
	}
	if limit <= 0 {
		limit = 10000
	}
	tag, err := q.Exec(ctx, `DELETE FROM ops.trigger_inbox WHERE event_id IN (
        SELECT event_id FROM ops.trigger_inbox
        WHERE received_at < clock_timestamp() - make_interval(secs => $1)
        ORDER BY received_at LIMIT $2)`, retention.Seconds(), limit)
	if err != nil {
		return 0, fmt.Errorf("prune inbox: %w", err)
	}
	return tag.RowsAffected(), nil
}
