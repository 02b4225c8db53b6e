package postgres

// The ledger's rules, each written once (docs/ARCHITECTURE.md, "Each rule
// once"). Every statement that needs one is composed from these functions;
// internal/archtest's TestRulesDefinedOnce fails if any other .go or .sql
// file restates one. Each returns a parenthesised SQL boolean expression
// over the ledger row aliased j; its other arguments are SQL expressions
// too (a parameter such as "$4", or another alias's column). They are
// exported for the verification tools (internal/verify), which check the
// ledger with the very rules it runs on.
//
// A running row's lease and attempt limit are read off the row: the values
// its current claim was granted (migration 007), so whether a live build
// may be taken over, quarantined or marked expired never depends on the
// caller's settings. A row last claimed before 007 has NULLs there and
// falls back to the caller's (lease, maxAttempts).

// SQLDemandUnserved: j has recorded demand that no landed frame covers.
func SQLDemandUnserved(j string) string {
	return "(" + j + ".requested_generation > " + j + ".built_generation)"
}

// SQLLeaseExpired: j is running on a lease older than it was granted. lease
// is in seconds.
func SQLLeaseExpired(j, lease string) string {
	return "(" + j + ".run_status = 'running' AND " + j + ".claimed_at < clock_timestamp() - make_interval(secs => coalesce(" +
		j + ".lease_seconds, " + lease + ")))"
}

// SQLAttemptsLeft: j's claims since its last landed frame are below its limit.
func SQLAttemptsLeft(j, maxAttempts string) string {
	return "(" + j + ".attempts < coalesce(" + j + ".max_attempts, " + maxAttempts + "))"
}

// SQLClaimable is the claim predicate: unserved demand, and either an idle row
// past its backoff or an expired lease with attempts left.
func SQLClaimable(j, lease, maxAttempts string) string {
	return "(" + SQLDemandUnserved(j) + " AND ((" + j + ".run_status = 'idle' AND " + SQLPastBackoff(j) + ") OR (" +
		SQLLeaseExpired(j, lease) + " AND " + SQLAttemptsLeft(j, maxAttempts) + ")))"
}

// SQLPastBackoff: j's backoff after a failed attempt, if any, is over.
func SQLPastBackoff(j string) string {
	return "(" + j + ".not_before IS NULL OR " + j + ".not_before <= clock_timestamp())"
}

// SQLHoldsToken is the fence: token is j's current claim and the claim is
// still running. Every statement that acts for a claim (heartbeat, commit,
// fail) is conditioned on it, in the same statement as its writes.
func SQLHoldsToken(j, token string) string {
	return "(" + j + ".claimed_generation = " + token + " AND " + j + ".run_status = 'running')"
}

// SQLBuiltByOther: frame f (a row of ops.matter_frames) was built by an
// identity other than the deployed one, given as four SQL expressions
// (name, version, model id, prompt hash). It is what makes a current matter
// outdated (the backfill, MattersOutdated, `railctl stale` and `why`).
func SQLBuiltByOther(f, name, version, modelID, promptHash string) string {
	return "((" + f + ".builder, " + f + ".builder_version, " + f + ".model_id, " + f + ".prompt_hash) IS DISTINCT FROM (" +
		name + ", " + version + ", " + modelID + ", " + promptHash + "))"
}

// SQLDemandUncovered: j has demand that arrived after its current or last
// claim took its target (requested > target, what the row's generated
// rebuild_needed says). While j runs, that demand is its build's
// follow-up; when the build fails, it is demand the failed attempt never
// tried to build.
func SQLDemandUncovered(j string) string {
	return "(" + j + ".requested_generation > " + j + ".target_generation)"
}

// SQLQuarantines: the failed or expired attempt j is running puts it in
// quarantine: it was the claim's last allowed attempt, and no demand
// arrived during it. Demand that did (uncovered) releases the would-be
// quarantine at once, as the same demand arriving a moment after the
// quarantine would release it: new demand releases a quarantine, whenever
// it arrives. Read on the row before the statement's writes.
func SQLQuarantines(j, maxAttempts string) string {
	return "(NOT " + SQLAttemptsLeft(j, maxAttempts) + " AND NOT " + SQLDemandUncovered(j) + ")"
}
