# mk/functions.mk: the five Lambda binaries, included by the main Makefile.
#
#   make build      bin/{relay,trigger,builder,sweeper,migrate}/bootstrap, static linux/arm64
#   make verify-bootstrap   check each binary is a static arm64 ELF built with lambda.norpc
#
# sam build uses mk/sam.mk's build-<LogicalId> targets instead (same flags).

FUNCTIONS  := relay trigger builder sweeper migrate
FN_GO      ?= go
FN_GOENV   := CGO_ENABLED=0 GOOS=linux GOARCH=arm64
FN_GOFLAGS := -tags lambda.norpc -trimpath -ldflags='-s -w'
BOOTSTRAPS := $(foreach f,$(FUNCTIONS),bin/$(f)/bootstrap)

.PHONY: build verify-bootstrap clean-bin $(BOOTSTRAPS)

build: $(BOOTSTRAPS)
	@$(VERIFY_BOOTSTRAP)

# Always rebuilt (go's own cache makes it cheap); the binaries depend on all of pkg/.
$(BOOTSTRAPS): bin/%/bootstrap:
	@mkdir -p $(dir $@)
	$(FN_GOENV) $(FN_GO) build $(FN_GOFLAGS) -o $@ ./functions/$*

# Fails unless every bootstrap is a static linux/arm64 ELF built with lambda.norpc and no cgo.
define VERIFY_BOOTSTRAP
for f in $(FUNCTIONS); do \
	  b=bin/$$f/bootstrap; \
	  test -x $$b || { echo "$$b: missing (make build)" >&2; exit 1; }; \
	  info=$$(file -b $$b); \
	  case "$$info" in *ELF*ARM*aarch64*statically\ linked*) ;; \
	    *) echo "$$b: not a static linux/arm64 executable: $$info" >&2; exit 1;; esac; \
	  m=$$($(FN_GO) version -m $$b); \
	  echo "$$m" | grep -q 'build	-tags=lambda.norpc' || { echo "$$b: not built with -tags lambda.norpc" >&2; exit 1; }; \
	  echo "$$m" | grep -q 'build	CGO_ENABLED=0' || { echo "$$b: cgo enabled" >&2; exit 1; }; \
	  echo "$$b: ok (static linux/arm64, lambda.norpc)"; \
	done
endef

verify-bootstrap:
	@$(VERIFY_BOOTSTRAP)

clean-bin:
	rm -rf bin
