# brief-rail. The two commands a new user needs:
#   make run    the whole rail on this machine, quickstart included
#   make test   every test, against a throwaway PostgreSQL and moto_server
# Both start what they need by themselves (see README.md).

GO       ?= go
PIP      ?= pip3
CFN_LINT ?= cfn-lint
TEST_TIMEOUT ?= 15m
# `make test` runs under the race detector; RACE= turns it off.
RACE     ?= -race

.DEFAULT_GOAL := help

.PHONY: help test test-short lint vet fmt-check tools rie host-bootstraps run serve run-anywhere railctl clean

help:
	@echo "make run        run the rail locally and play the quickstart (three PDFs -> a Brief)"
	@echo "make run-anywhere   make run from a copy of the tree in a directory only its owner may enter"
	@echo "make test       lint + all tests (starts its own PostgreSQL and moto_server)"
	@echo "make build      five Lambda bootstraps under bin/ (linux/arm64, static)"
	@echo "make lint       go vet, gofmt check and cfn-lint template.yaml"
	@echo "make chaos SEEDS=N   the seeded fault simulations: the ledger sim with N seeds, the promise sim with PROMISE_SEEDS"
	@echo "make bench      benchmarks against River, watermill and pgbench"
	@echo "make sam-build / make deploy   AWS SAM build and deploy"

# The AWS Lambda Runtime Interface Emulator (the runtime `sam local invoke` runs, without Docker):
# the tests run every bootstrap under it. A pseudo-version: the module has no tag the proxy serves.
RIE_VERSION ?= v0.0.0-20261030222936-bef5c4ba774d
LOCAL_BIN   := $(CURDIR)/.local/bin

# moto_server and cfn-lint come from PyPI; install them when missing. aws-lambda-rie comes from
# the Go module proxy into .local/bin (internal/testenv/rie finds it there).
# pdftotext (Debian's poppler-utils) is the reference text pkg/pdftext's recall test measures
# against; tests only, never shipped: apt-get as root, or through sudo when there is one.
tools: rie
	@command -v moto_server >/dev/null 2>&1 || { echo "installing moto[server] (pip)"; $(PIP) install --quiet "moto[server]>=5,<6"; }
	@command -v $(CFN_LINT) >/dev/null 2>&1 || { echo "installing cfn-lint (pip)"; $(PIP) install --quiet "cfn-lint>=1,<2"; }
	@command -v pdftotext >/dev/null 2>&1 || { \
	  echo "installing poppler-utils (apt-get), for pdftotext"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; elif command -v sudo >/dev/null 2>&1; then SUDO="sudo -n"; \
	  else echo "cannot install poppler-utils: not root and no sudo; the recall test will skip (or fail under CI=true)"; exit 0; fi; \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq poppler-utils >/dev/null || \
	  { $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq poppler-utils >/dev/null; } || \
	  echo "apt-get could not install poppler-utils"; }

# The emulator alone (make bench's cold-start section needs only it).
rie:
	@test -x $(LOCAL_BIN)/aws-lambda-rie || { echo "installing aws-lambda-rie $(RIE_VERSION) into .local/bin (go install)"; \
	  GOBIN=$(LOCAL_BIN) $(GO) install github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@$(RIE_VERSION); } && \
	  test -x $(LOCAL_BIN)/aws-lambda-rie || { echo "aws-lambda-rie is not in $(LOCAL_BIN) after go install"; exit 1; }

test: tools lint host-bootstraps
	$(GO) test $(RACE) -count=1 -timeout $(TEST_TIMEOUT) ./...
	cd third_party/pdf && $(GO) vet ./... && $(GO) test $(RACE) -count=1 ./...

# The functions built for this machine (static, no cgo, lambda.norpc), where pkg/lambdafn's emulator
# tests look for them (they rebuild too; this warms the no-cgo build cache outside the test timeout).
host-bootstraps:
	@for f in relay trigger builder sweeper migrate; do \
	  CGO_ENABLED=0 $(GO) build -tags lambda.norpc -o bin/host/$$f/bootstrap ./functions/$$f || exit 1; done

test-short:
	$(GO) test -short -count=1 ./...

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

lint: vet fmt-check lint-template

railctl:
	$(GO) build -o bin/railctl ./cmd/railctl

clean:
	rm -rf bin .aws-sam

-include mk/*.mk
