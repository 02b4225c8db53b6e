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
