package postgres

// The relay's own statements, for the plan tests in package rail_test.
const (
	RelayRetrySQL  = relayRetrySQL
	RelayUnsentSQL = relayUnsentSQL
)
