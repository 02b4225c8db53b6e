# The local rail (docs/quickstart.md). run/serve are declared .PHONY in the
# main Makefile; these are their recipes.

run:
	$(GO) run ./cmd/railctl run

serve:
	$(GO) run ./cmd/railctl dev

# make run-anywhere: `make run` from a copy of this tree (tracked and untracked, not ignored, files)
# in a directory only its owner may enter, under a parent only its owner may enter: how a user who
# clones under /root or `mktemp -d` runs it (as root the server runs as the OS user postgres, which
# cannot enter either). The clone's state directory and the copy are removed afterwards.
run-anywhere:
	@set -eu; parent=$$(mktemp -d); chmod 700 "$$parent"; mkdir -m 700 "$$parent/clone"; \
	git ls-files -z --cached --others --exclude-standard | xargs -0 sh -c \
	  'for f; do if [ -e "$$f" ]; then cp --parents "$$f" "$$0/" || exit 1; fi; done' "$$parent/clone"; \
	echo "run-anywhere: make run in $$parent/clone (0700, under a 0700 parent)"; \
	status=0; $(MAKE) --no-print-directory -C "$$parent/clone" run >"$$parent/run.log" 2>&1 || status=$$?; \
	cat "$$parent/run.log"; \
	state=$$(sed -n 's/.*remove with rm -rf \(.*\))$$/\1/p' "$$parent/run.log" | head -n 1); \
	if [ -n "$$state" ]; then rm -rf "$$state"; fi; rm -rf "$$parent"; \
	if [ "$$status" -ne 0 ]; then echo "run-anywhere: FAILED (exit $$status)" >&2; exit "$$status"; fi; \
	echo "run-anywhere: ok (its state directory $$state removed)"
