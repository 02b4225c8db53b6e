package promise

// Kind names a workflow of the host application or a fault the run
// injects. Config.Disabled switches kinds off; Config.Force makes a kind
// happen in every seed (a defect's row in the negative-control table).
type Kind string

// The host application's workflows (pkg/record).
const (
	WUploadOne      Kind = "upload one document"
	WUploadMany     Kind = "upload several documents in one transaction"
	WClose          Kind = "close a matter (no fact of it in flight)"
	WReopen         Kind = "re-open a matter"
	WRegenerate     Kind = "Regenerate"
	WIdentityChange Kind = "builder identity change (backfill)"
	// WCloseInFlight closes a matter while one of its uploads' facts has not
	// reached the trigger yet (issue 18, defect 1).
	WCloseInFlight Kind = "close a matter with an upload in flight"
	// WDemandDuringLastAttempt uploads a document while the matter's last
	// allowed attempt is building, and that attempt fails (defect 6).
	WDemandDuringLastAttempt Kind = "demand during the last attempt"
	// WBackfillSlowRate runs the backfill at less than one build a minute
	// (defect 9).
	WBackfillSlowRate Kind = "backfill rate below 1/min"
)

// Faults, by hop.
const (
	// The bus (the relay's PutEvents).
	FBusSlow           Kind = "slow bus (within the publish budget)"
	FBusSlowPastBudget Kind = "slow bus (a pass's calls outlast the relay role's idle timeout)" // defect 2
	FBusRetryable      Kind = "retryable per-entry error (ThrottlingException, InternalFailure)"
	FBusThrottleStorm  Kind = "throttling for ten minutes" // defect 3
	FBusPermanent      Kind = "permanent per-entry refusal (a poison fact)"
	FBusCallFailed     Kind = "whole PutEvents call failed"
	FKillDuringPublish Kind = "relay session killed during PutEvents"
	// The trigger queue.
	FTriggerDuplicate Kind = "trigger message duplicated"
	FTriggerReorder   Kind = "trigger batch reordered"
	FTriggerDelay     Kind = "trigger message delayed"
	FPartialBatch     Kind = "partial batch failure (processed message redelivered)"
	FLockTimeout      Kind = "statement cancelled by the role's lock timeout"
	// The build and backfill queues.
	FNudgeLost       Kind = "nudge lost"
	FNudgeDuplicate  Kind = "nudge duplicated"
	FNudgeDelay      Kind = "nudge delayed"
	FNudgeSendFailed Kind = "nudge send failed"
	// Builders.
	FBuildFailed        Kind = "build failed"
	FBuildTimeout       Kind = "build timed out"
	FBuildThrottled     Kind = "model throttled (saturated)"
	FBuildRefusedBody   Kind = "build body the database refuses (\\u0000)" // defect 5
	FBuildersSaturated  Kind = "live builders saturated (no poll for a while)"
	FBuildLate          Kind = "builder invoked with too little time left (handed back)"
	FBackfillSaturated  Kind = "backfill builders saturated past the sweeper's grace" // defect 4
	FDemandDuringBuild  Kind = "demand during a build"
	FKillDuringBuild    Kind = "builder's connections killed during the build"
	FSweeperConnKilled  Kind = "sweeper's connections killed before its pass"
	FTriggerConnsKilled Kind = "trigger's connections killed before its batch"
)

// AllKinds lists every kind, workflows first.
var AllKinds = []Kind{WUploadOne, WUploadMany, WClose, WReopen, WRegenerate, WIdentityChange,
	WCloseInFlight, WDemandDuringLastAttempt, WBackfillSlowRate,
	FBusSlow, FBusSlowPastBudget, FBusRetryable, FBusThrottleStorm, FBusPermanent, FBusCallFailed, FKillDuringPublish,
	FTriggerDuplicate, FTriggerReorder, FTriggerDelay, FPartialBatch, FLockTimeout,
	FNudgeLost, FNudgeDuplicate, FNudgeDelay, FNudgeSendFailed,
	FBuildFailed, FBuildTimeout, FBuildThrottled, FBuildRefusedBody, FBuildersSaturated, FBuildLate,
	FBackfillSaturated, FDemandDuringBuild, FKillDuringBuild, FSweeperConnKilled, FTriggerConnsKilled}

// PendingFixes are the kinds switched off by default because they
// reproduce a defect whose fix has not merged; the default run injects
// every other kind. Empty: every fix of issue 18 has merged (defects 1, 5
// and 6 with i18-ledger, 2 and 3 with i18-relay, 4, 8 and 9 with
// i18-sweeper), so the default run injects every kind, and each defect's
// row in TestPromiseDefects reverts its fix through Reverts where a seam
// exists. A later defect found by the oracle before its fix merges goes
// here (its kind) and into PendingViolations (what it produces through
// kinds that stay on), each entry naming the defect.
var PendingFixes = map[Kind]string{}

// PendingViolations are violation kinds that the code produces through
// kinds that stay on: the default run reports them by count, as known,
// instead of failing. Empty since i18-sweeper merged (defects 8 and 4 were
// the last: a failed build retried at the sweeper's grace, and a failed
// backfill build re-nudged onto the live queue).
var PendingViolations = map[string]string{}

// Scenarios are the kinds with a scenario (Config.Force plays one; see
// force). A share of the default run's seeds (ScenarioShare) plays one of
// those not disabled.
var Scenarios = []Kind{WCloseInFlight, WDemandDuringLastAttempt, WBackfillSlowRate, FBusSlowPastBudget,
	FBusThrottleStorm, FBackfillSaturated, FBuildRefusedBody, FBuildFailed}

// ScenarioShare is the share of seeds without Config.Force that play a
// scenario.
const ScenarioShare = 0.2
