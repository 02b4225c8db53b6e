# mk/sam.mk: AWS SAM build targets, included by the main Makefile.
#
# template.yaml gives every function `Metadata: BuildMethod: makefile` and `CodeUri: .`, so
# `sam build` copies the repository and runs `make build-<LogicalId> ARTIFACTS_DIR=<dir>` in that
# copy (the root go.mod is there). Each target writes one static linux/arm64 `bootstrap`.
# By hand: make build-RelayFunction ARTIFACTS_DIR=bin/relay
# Include this file after the main Makefile's first (default) target.

SAM        ?= sam
CFN_LINT   ?= cfn-lint
SAM_GO     ?= go
# SAM_GOARCH=amd64 only for an x86_64 copy of the template run by sam local (README, "Locally").
SAM_GOARCH ?= arm64
SAM_GOENV  := CGO_ENABLED=0 GOOS=linux GOARCH=$(SAM_GOARCH)
SAM_GOBUILD = $(SAM_GOENV) $(SAM_GO) build -tags lambda.norpc -trimpath -ldflags='-s -w'

.PHONY: build-RelayFunction build-TriggerFunction build-BuilderFunction build-SweeperFunction build-MigrateFunction \
	sam-build deploy deploy-check lint-template sam-artifacts-dir

sam-artifacts-dir:
	@test -n "$(ARTIFACTS_DIR)" || { echo "ARTIFACTS_DIR is not set (sam build sets it; by hand: ARTIFACTS_DIR=bin/<fn>)" >&2; exit 2; }

build-RelayFunction: sam-artifacts-dir
	$(SAM_GOBUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/relay

build-TriggerFunction: sam-artifacts-dir
	$(SAM_GOBUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/trigger

build-BuilderFunction: sam-artifacts-dir
	$(SAM_GOBUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/builder

build-SweeperFunction: sam-artifacts-dir
	$(SAM_GOBUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/sweeper

build-MigrateFunction: sam-artifacts-dir
	$(SAM_GOBUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/migrate

# sam build / sam deploy read samconfig.toml; pick an environment with SAM_ENV=prod.
SAM_ENV ?= default

sam-build:
	$(SAM) build --config-env $(SAM_ENV)

# samconfig.toml's placeholders (REPLACE_ME) would fail half-way through CloudFormation, and a
# concurrency quota, Bedrock model access or VPC DNS setting the account lacks fails the deploy or
# the first invocations: mk/deploy-check.sh checks them first (the account checks only where AWS
# credentials exist), printing the fix for each.
deploy: deploy-check sam-build
	$(SAM) deploy --config-env $(SAM_ENV)

deploy-check:
	@SAM_ENV=$(SAM_ENV) sh mk/deploy-check.sh

# --include-checks I: the informational checks too (stateful resources' deletion policies, ...).
lint-template:
	@command -v $(CFN_LINT) >/dev/null 2>&1 || { echo "cfn-lint not found: pip install 'cfn-lint>=1.0'" >&2; exit 127; }
	$(CFN_LINT) --include-checks I -- template.yaml
