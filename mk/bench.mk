# mk/bench.mk: side-by-side benchmarks (the rail vs River, pgbench; watermill once the relay lands).
#
# `make bench` runs bench/cmd/railbench from bench/'s own go.mod (the product never depends on its
# peers). It starts a throwaway PostgreSQL from the local binaries via pkg/localpg, or uses
# DATABASE_URL (its role needs CREATEDB), prints a `name: value` summary and writes
# bench/results/latest.json. Pass flags with BENCH_FLAGS, e.g.
#   make bench BENCH_FLAGS='-growth 0,1M,10M'
#   make bench BENCH_FLAGS='-only throughput,pgbench -reps 9'
# Include this file from the main Makefile (after its default target).

BENCH_GO    ?= go
BENCH_FLAGS ?=

.PHONY: bench bench-vet

bench:
	cd bench && $(BENCH_GO) run ./cmd/railbench $(BENCH_FLAGS)

bench-vet:
	cd bench && $(BENCH_GO) vet ./...
