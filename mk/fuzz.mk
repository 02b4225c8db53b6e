# mk/fuzz.mk: coverage-guided fuzzing of the hostile-input paths, each target for FUZZTIME.
#
#   make fuzz                 every target for 30s each
#   make fuzz FUZZTIME=5m
# The seed corpora (every hostile shape of docs/pdf-extraction.md among them) run as ordinary tests
# in `make test`. New inputs are minimized for at most 5 s (some seeds are large). A failing input is
# written under the package's testdata/fuzz/ to commit with its fix.

FUZZTIME ?= 30s
FUZZ_TARGETS = ./pkg/pdftext:FuzzFileStructure ./pkg/pdftext:FuzzContentStream ./pkg/pdftext:FuzzCMap \
	./pkg/pdftext:FuzzFilterData \
	./pkg/pdftext:FuzzExtract ./pkg/doctext:FuzzClean

.PHONY: fuzz

fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$name ($$pkg) for $(FUZZTIME)"; \
		go test -run '^$$' -fuzz "^$$name$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 5s $$pkg; \
	done
