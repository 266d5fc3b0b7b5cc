# fusebox — every command the README needs is a target here.
GO        ?= go
BIN       := $(CURDIR)/.bin
OUT       := $(CURDIR)/out
# Every module of the repository: the library and the nested modules. A new
# nested module joins by its go.mod alone (see "Versioning" in the README).
MODULES   := $(shell find . -name go.mod -not -path './.*' -not -path './out/*' -not -path '*/testdata/*' -not -path '*/node_modules/*' -exec dirname {} \; | sort)
# The oldest Go the library supports (its go directive), at its newest patch
# release; make test fetches it through the module proxy.
GO_MIN    := go1.25.14

STATICCHECK_VERSION := v0.8.2
GOCYCLO_VERSION     := v0.6.0
# The library's packages (the root module without its examples): no
# function there may have a cyclomatic complexity above CYCLO_OVER.
LIBRARY     = $(shell GOWORK=off $(GO) list -f '{{.Dir}}' ./... | grep -v -x -e '$(CURDIR)' -e '.*/examples/.*' -e '.*/internal/.*' | sed 's|^$(CURDIR)/||')
CYCLO_OVER := 15
BENCH_COUNT ?= 6
BENCH_TIME  ?= 1s
FUZZ_TIME   ?= 10m

.DEFAULT_GOAL := help

.PHONY: help
help: ## List the targets.
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  make %-13s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: test
test: work redis-server ## go vet + go test -race over every module, the library on its oldest Go, and release-check.
	@set -e; for m in $(MODULES); do \
		echo "==> $$m"; \
		(cd $$m && $(GO) vet ./... && $(GO) test -race -count=1 ./...); \
	done
	@echo "==> . alone, with $(GO_MIN), the oldest Go the library supports"
	GOWORK=off GOTOOLCHAIN=$(GO_MIN) $(GO) vet ./...
	GOWORK=off GOTOOLCHAIN=$(GO_MIN) $(GO) test -count=1 ./...
	@echo "==> release-check"
	@$(MAKE) --no-print-directory release-check

.PHONY: work
work: ## Write go.work so that it joins every module of the repository.
	@$(GO) run ./internal/releasecheck -work

.PHONY: tidy
tidy: ## go mod tidy in every module, against the modules as HEAD would publish them.
	$(GO) run ./internal/releasecheck -tidy

.PHONY: release-check
release-check: ## Publish every module of HEAD into a local module proxy and use them as a new user would (~30 s warm, ~1 min cold).
	$(GO) run ./internal/releasecheck -go $(GO_MIN)

.PHONY: redis-server
redis-server: ## Install redis-server (Debian package) if missing: the fleet module's tests start their own.
	@command -v redis-server >/dev/null 2>&1 || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y redis-server; }

# The dashboard's browser test (dashboard/browsertest) drives a headless
# Chromium, a Debian package: installed here when missing, so that a fresh
# machine and CI run the test instead of skipping it.
.PHONY: chromium
chromium: ## Install Chromium (Debian package) for the dashboard's browser test, if missing.
	@command -v chromium >/dev/null 2>&1 || { \
		echo "chromium not found: installing the Debian package"; \
		SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		$$SUDO apt-get update && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y chromium; }

test: chromium

# make demo DASHBOARD=127.0.0.1:8080 runs the fusebox mode alone, slower, with
# its live dashboard there (kept up after the run until Ctrl-C).
DEMO_DASHBOARD = $(if $(DASHBOARD),-modes fusebox -speed 3 -dashboard $(DASHBOARD))

.PHONY: demo
demo: ## One hung supplier, three protections, over loopback HTTP (~1 min): table, JSON and chart in out/.
	cd loadtest && $(GO) run ./cmd/loadtest exhaustion -out $(OUT) $(DEMO_DASHBOARD)

.PHONY: demo-burst
demo-burst: ## A healthy, bursty supplier: busy refusals vs false trips, two rules (~1 min).
	cd loadtest && $(GO) run ./cmd/loadtest burst -out $(OUT)

.PHONY: demo-fleet
demo-fleet: redis-server ## Ten shops and a hung supplier, local breakers vs a fleet linked through Redis (~15 s): table and chart in out/.
	@mkdir -p $(OUT)
	cd fleet && FLEET_SCENARIO_OUT=$(OUT) $(GO) test -count=1 -run Scenario -v .

.PHONY: demo-queue
demo-queue: ## A supplier behind a queue, with and without a low-water mark (~1 min).
	cd loadtest && $(GO) run ./cmd/loadtest queue -out $(OUT)

.PHONY: cyclo
cyclo: $(BIN)/gocyclo ## gocyclo (pinned): no library function above $(CYCLO_OVER); prints the ten most complex.
	@$(BIN)/gocyclo -ignore '_test.go$$' -top 10 $(LIBRARY)
	@over=$$($(BIN)/gocyclo -ignore '_test.go$$' -over $(CYCLO_OVER) $(LIBRARY)); \
		if [ -n "$$over" ]; then echo "cyclomatic complexity above $(CYCLO_OVER):"; echo "$$over"; exit 1; fi

$(BIN)/gocyclo:
	GOBIN=$(BIN) $(GO) install github.com/fzipp/gocyclo/cmd/gocyclo@$(GOCYCLO_VERSION)

.PHONY: lint
lint: $(BIN)/staticcheck cyclo ## gofmt, staticcheck (pinned) over every module, and make cyclo.
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
		if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	@set -e; for m in $(MODULES); do \
		echo "==> $$m"; (cd $$m && $(BIN)/staticcheck ./...); \
	done

$(BIN)/staticcheck:
	GOBIN=$(BIN) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

.PHONY: bench
bench: ## Benchmarks of the library, $(BENCH_COUNT) counts each, medians via benchstat.
	@mkdir -p $(OUT)
	$(GO) test -run '^$$' -bench . -benchmem -count $(BENCH_COUNT) -benchtime $(BENCH_TIME) ./... | tee $(OUT)/bench.txt
	@$(GO) run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da $(OUT)/bench.txt 2>/dev/null || true

.PHONY: bench-call
bench-call: ## Submit+Await beside its baselines, BENCH_COUNT interleaved rounds, per-round ratios.
	@mkdir -p $(OUT)
	$(GO) test -c -o $(OUT)/executor.test ./executor
	for i in $$(seq $(BENCH_COUNT)); do \
		$(OUT)/executor.test -test.run '^$$' -test.bench 'BenchmarkCall|BenchmarkReject|BenchmarkBaseline' -test.benchmem -test.benchtime 200ms -test.count 1; \
	done | tee $(OUT)/bench-call.txt
	$(GO) run ./internal/benchratio < $(OUT)/bench-call.txt

COMPARE_FLAGS ?=

.PHONY: compare
compare: ## fusebox side by side with gobreaker, failsafe-go, hystrix-go, go-resiliency, ants (~2 min; out/compare/).
	@mkdir -p $(OUT)/compare
	cd compare && $(GO) run ./cmd/report -out $(OUT)/compare $(COMPARE_FLAGS)

.PHONY: fuzz
fuzz: ## Differential fuzzing of the breaker against its reference model for FUZZ_TIME.
	$(GO) test ./breaker -run '^$$' -fuzz FuzzBreakerMatchesModel -fuzztime $(FUZZ_TIME)

# Shadow mode's cost per call: shadow beside enforce, from bench-call's rounds.
.PHONY: bench-shadow
bench-shadow: bench-call ## Shadow mode's per-round ratio to enforce mode (target ≤ 1.05×).
	grep -E '^BenchmarkCallShadow' $(OUT)/bench-call.txt | $(GO) run ./internal/benchratio -base enforce

# The adaptive limit (docs/adaptive.md): its cost per call beside a fixed
# bulkhead, and the sweep of fixed sizes its goodput is compared with.
.PHONY: bench-adaptive
bench-adaptive: ## The adaptive limit's per-round ratio to a fixed bulkhead, BENCH_COUNT interleaved rounds (target ≤ 5 ns added).
	@mkdir -p $(OUT)
	$(GO) test -c -o $(OUT)/executor.test ./executor
	for i in $$(seq $(BENCH_COUNT)); do \
		$(OUT)/executor.test -test.run '^$$' -test.bench 'BenchmarkCallAdaptive' -test.benchmem -test.benchtime 200ms -test.count 1; \
	done | tee $(OUT)/bench-adaptive.txt
	$(GO) run ./internal/benchratio -base static < $(OUT)/bench-adaptive.txt

.PHONY: sweep-adaptive
sweep-adaptive: ## Goodput of fixed Workers 1…256 beside the adaptive limit in the scenarios A–E (~1 min).
	@mkdir -p $(OUT)
	cd loadtest && FUSEBOX_SWEEP=1 $(GO) test -run '^TestAdaptiveSweep$$' -count=1 -v -timeout 30m . | tee $(OUT)/sweep-adaptive.txt

.PHONY: demo-adaptive
demo-adaptive: ## The adaptive limit following a capacity step (scenario C), beside a fixed 32, in real time with a chart (~1 min; out/adaptive.png).
	cd loadtest && $(GO) run ./cmd/loadtest adaptive -out $(OUT)
