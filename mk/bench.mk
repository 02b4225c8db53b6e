# mk/bench.mk: side-by-side benchmarks (the rail vs River, pgbench; watermill once the relay lands).
#
# `make bench` runs bench/cmd/railbench from bench/'s own go.mod (the product never depends on its
# peers). It starts a throwaway PostgreSQL from the local binaries via internal/testenv/localpg, or uses
# DATABASE_URL (its role needs CREATEDB), prints a `name: value` summary and writes
# bench/results/latest.json. Pass flags with BENCH_FLAGS, e.g.
#   make bench BENCH_FLAGS='-growth 0,1M,10M'
#   make bench BENCH_FLAGS='-only throughput,pgbench -reps 9'
#   make bench BENCH_FLAGS='-only fairness -reps 3'   # small firms beside one firm's bulk import
# Every section runs by default, the fairness section included (fair_small_firm_p99_ratio,
# unfair_small_firm_p99_ratio, fair_import_completion_vs_capacity, fair_idle_builder_ms_while_queued).
# Include this file from the main Makefile (after its default target).

BENCH_GO    ?= go
BENCH_FLAGS ?=

.PHONY: bench bench-vet

# Then each function's cold start under the Lambda runtime emulator (the rie target installs it, as
# make test's tools does; CI=true makes a missing emulator a failure, never a silent skip): the medians
# of 5 starts of the init duration and of the bootstrap's peak memory, as `name: value`.
bench: rie
	cd bench && $(BENCH_GO) run ./cmd/railbench $(BENCH_FLAGS)
	@out=$$(CI=true $(BENCH_GO) test -count=1 -run '^$$' -bench ColdStart -benchtime 5x ./pkg/lambdafn/ 2>&1); st=$$?; \
	echo "$$out" | grep -E '^(Benchmark|ok|FAIL|---|\s+\S+_test\.go)'; \
	if [ $$st -ne 0 ] || ! echo "$$out" | grep -q 'init-ms'; then echo "$$out" | tail -n 80; echo "bench: the cold-start section failed or measured nothing (is aws-lambda-rie in .local/bin? make rie; its output above)"; exit 1; fi; \
	echo "$$out" | awk '/init-ms/ { n = $$1; sub(/^BenchmarkColdStart\//, "", n); sub(/-[0-9]+$$/, "", n); \
		for (i = 2; i < NF; i++) { if ($$(i+1) == "init-ms") init = $$i; if ($$(i+1) == "maxrss-MB") mb = $$i }; \
		printf "coldstart_%s_init_ms: %s\ncoldstart_%s_maxrss_mb: %s\n", n, init, n, mb }'
	@# The isolated PDF worker's cost per document (a real 2-page order): in this process, in a warm
	@# worker, in a cold one; medians of 5 runs of 20 documents, as `name: value`.
	$(BENCH_GO) test -count=5 -run '^$$' -bench WorkerOverhead -benchtime 20x ./pkg/pdftext/worker/ | \
		awk '/ms\/doc/ { n = $$1; sub(/^BenchmarkWorkerOverhead\//, "", n); sub(/-[0-9]+$$/, "", n); v[n] = v[n] " " $$(NF-1) } \
		END { for (k in v) { c = split(v[k], a, " "); for (i = 1; i <= c; i++) for (j = i + 1; j <= c; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }; \
		printf "pdf-worker-%s-ms-per-doc: %s\n", k, a[int((c + 1) / 2)] } }' 
	@# Text cleaning's CPU per byte of line for 1 KiB to 1 MiB lines of removable numbers (flat: linear),
	@# medians of 5, as `name: value`.
	$(BENCH_GO) test -count=5 -run '^$$' -bench CleanLine -benchtime 4x ./pkg/doctext/ | \
		awk '/cpu-ns\/byte/ { n = $$1; sub(/^BenchmarkCleanLine\//, "", n); sub(/-[0-9]+$$/, "", n); v[n] = v[n] " " $$(NF-1) } \
		END { for (k in v) { c = split(v[k], a, " "); for (i = 1; i <= c; i++) for (j = i + 1; j <= c; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }; \
		printf "doctext-clean-%s-line-cpu-ns-per-byte: %s\n", k, a[int((c + 1) / 2)] } }' 

bench-vet:
	cd bench && $(BENCH_GO) vet ./...
