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

// The relay's one-statement claim, for its plan test.
var RelayClaimSQL = relayClaimSQL
