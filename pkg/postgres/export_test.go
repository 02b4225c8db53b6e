package postgres

// The relay's own statements, for the plan tests in package rail_test.
const (
	RelayRetrySQL  = relayRetrySQL
	RelayUnsentSQL = relayUnsentSQL
)

// Frame retention's two statements, for its plan test.
const (
	MarkFramesSQL  = markFramesSQL
	PruneFramesSQL = pruneFramesSQL
)

// The fair selections (the sweeper's re-nudges, the backfill's
// admission), for their cost test.
var (
	SweepUnservedSQL = sweepUnservedSQL
	OutdatedSQL      = outdatedSQL
)

// The relay's one-statement claim, for its plan test.
var RelayClaimSQL = relayClaimSQL

const (
	OutboxCursorSQL = outboxCursorSQL
	OutboxGaugesSQL = outboxGaugesSQL
)

// The demand statement, for its plan test.
const DemandSQL = demandSQL

// The group commit's statement, which ops.commit_frames must run word for
// word.
var CommitSQL = commitSQL

// The batch claim's statement, which ops.claim_matters must run word for
// word.
var ClaimBatchSQL = claimBatchSQL

// The retention statements, for their cost test.
const (
	PruneInboxSQL         = pruneInboxSQL
	PruneDemandRecordsSQL = pruneDemandRecordsSQL
	PruneNudgeRecordsSQL  = pruneNudgeRecordsSQL
	PruneOutboxSQL        = pruneOutboxSQL
	OutboxPrunableLeftSQL = outboxPrunableLeftSQL
)
