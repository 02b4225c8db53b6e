# mk/chaos.mk: the seeded fault simulations, included by the main Makefile: the ledger
# simulation (internal/verify/sim) and the promise simulation (internal/verify/promise: the
# functions' own handlers over the local transport, the promise as the oracle).
#
#   make chaos SEEDS=5000                 seeds 1..5000 of the ledger sim (and PROMISE_SEEDS of the promise sim)
#   make chaos SEEDS=200 SEED_START=9001  seeds 9001..9200
#   make chaos-replay SEED=1234           one seed, full trace
#   make chaos-promise PROMISE_SEEDS=2000 the promise sim alone (PROMISE_STEPS fault-phase steps a seed, 70;
#                                         make test runs 200 seeds of 20), with its defect table x PROMISE_DEFECT_FACTOR
#   make chaos-promise-replay SEED=7      one promise seed of PROMISE_STEPS steps, full trace (FORCE=<kind substring>
#                                         replays a defect row; PROMISE_STEPS=20 a make test seed)
#
# Each seed is a deterministic run (math/rand/v2 PCG) against a real
# PostgreSQL: the same seed replays the same steps and faults. The log goes
# to bin/chaos.log; the summary line, the faults by kind and any failing
# seed's replay command are printed at the end.

GO          ?= go
SEEDS       ?= 1000
SEED_START  ?= 1
CHAOS_LANES ?= 4
CHAOS_LOG   ?= bin/chaos.log
PROMISE_SEEDS ?= 1000
PROMISE_STEPS ?= 70
PROMISE_DEFECT_FACTOR ?= 4
PROMISE_LOG ?= bin/chaos-promise.log

.PHONY: chaos chaos-replay chaos-ledger chaos-promise chaos-promise-replay

chaos: chaos-ledger chaos-promise

chaos-ledger:
	@mkdir -p $(dir $(CHAOS_LOG))
	@echo "chaos: $(SEEDS) seeds from $(SEED_START), $(CHAOS_LANES) lanes; log in $(CHAOS_LOG)"
	@RAIL_CHAOS_SEEDS=$(SEEDS) RAIL_CHAOS_LANES=$(CHAOS_LANES) $(GO) test -count=1 -timeout 0 \
		-run 'TestSimulation$$' ./internal/verify/sim -seed-start=$(SEED_START) -v >$(CHAOS_LOG) 2>&1; \
	status=$$?; \
	grep -E 'sim summary|faults injected by kind|^ {8,10}[a-zA-Z].* +[0-9]+$$|replay:|seeds failed|^(ok|FAIL)' $(CHAOS_LOG) | sed 's/^ *//'; \
	exit $$status

chaos-replay:
	@test -n "$(SEED)" || { echo "usage: make chaos-replay SEED=N" >&2; exit 2; }
	$(GO) test -count=1 -run 'TestSimulation$$' ./internal/verify/sim -seed=$(SEED) -v

chaos-promise:
	@mkdir -p $(dir $(PROMISE_LOG))
	@echo "chaos-promise: $(PROMISE_SEEDS) seeds of $(PROMISE_STEPS) steps from $(SEED_START), $(CHAOS_LANES) lanes, defect rows x$(PROMISE_DEFECT_FACTOR); log in $(PROMISE_LOG)"
	@RAIL_PROMISE_SEEDS=$(PROMISE_SEEDS) RAIL_PROMISE_STEPS=$(PROMISE_STEPS) RAIL_CHAOS_LANES=$(CHAOS_LANES) RAIL_PROMISE_DEFECT_FACTOR=$(PROMISE_DEFECT_FACTOR) \
		$(GO) test -count=1 -timeout 0 -run 'TestPromise$$|TestPromiseDefects' ./internal/verify/promise -seed-start=$(SEED_START) -v >$(PROMISE_LOG) 2>&1; \
	status=$$?; \
	grep -E 'promise summary|kinds injected|^ +promise_test.go:[0-9]+: (violations|known|defect)|replay:|seeds broke|^(ok|FAIL)' $(PROMISE_LOG) | sed 's/^ *//'; \
	exit $$status

chaos-promise-replay:
	@test -n "$(SEED)" || { echo "usage: make chaos-promise-replay SEED=N [FORCE=kind]" >&2; exit 2; }
	$(GO) test -count=1 -run 'TestPromise$$' ./internal/verify/promise -seed=$(SEED) -steps=$(PROMISE_STEPS) -force='$(FORCE)' -v
