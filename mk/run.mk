# The local rail (docs/quickstart.md). run/serve are declared .PHONY in the
# main Makefile; these are their recipes.

run:
	$(GO) run ./cmd/railctl run

serve:
	$(GO) run ./cmd/railctl dev
