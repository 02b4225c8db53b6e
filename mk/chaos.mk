# mk/chaos.mk: the seeded fault simulation (internal/verify/sim), included by the main Makefile.
#
#   make chaos SEEDS=5000                 seeds 1..5000
#   make chaos SEEDS=200 SEED_START=9001  seeds 9001..9200
#   make chaos-replay SEED=1234           one seed, full trace
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

.PHONY: chaos chaos-replay

chaos:
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
