# fusebox — every command the README needs is a target here.
# A recipe that pipes a command (go test | tee) fails when that command
# does, not only when the last one of the pipe does.
SHELL       := bash
.SHELLFLAGS := -o pipefail -c
GO        ?= go
BIN       := $(CURDIR)/.bin
OUT       := $(CURDIR)/out
# Every module of the repository: the library and the nested modules. A new
# nested module joins by its go.mod alone (see "Versioning" in the README).
MODULES   := $(shell find . -name go.mod -not -path './.*' -not -path './out/*' -not -path '*/testdata/*' -not -path '*/node_modules/*' -exec dirname {} \; | sort)
# The root module's path: in the workspace (go.work), $(ROOT_PATH)/...
# names every package of every module, so that one go test runs them all,
# as many at once as there are cores, with no module waiting for the
# slowest package of the one before it.
ROOT_PATH := github.com/fusebox-go/fusebox
# go test runs go vet on every package it tests (those without test files
# too), on the build it tests; given every analyzer go vet has, it is the
# whole of go vet, without a second build of the workspace next to the race
# build (on a fresh machine that build took some 3 minutes).
VET_ALL    = $(shell $(GO) tool vet help 2>&1 | awk '/^Registered analyzers:/ {f = 1; next} f && /^    [a-z]+ / {print $$1}' | paste -sd, -)
# The same for $(GO_MIN), whose go vet may know fewer analyzers: its go test
# is then the whole of its go vet too, in one build instead of two.
VET_MIN    = $(shell GOWORK=off GOTOOLCHAIN=$(GO_MIN) $(GO) tool vet help 2>&1 | awk '/^Registered analyzers:/ {f = 1; next} f && /^    [a-z]+ / {print $$1}' | paste -sd, -)
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
	@echo "==> every module of the workspace: go test -race, with every analyzer of go vet"
	@[ -n "$(VET_ALL)" ] || { echo "make test: \`$(GO) tool vet help\` listed no analyzers"; exit 1; }
	$(GO) test -race -count=1 -vet=$(VET_ALL) $(ROOT_PATH)/...
	@echo "==> compare: go-zero's cases, which -race skips (a data race in go-zero itself), without it"
	cd compare && $(GO) test -count=1 -run '^Test(EveryLibraryUnderAHungSupplier|FailureCountingBreakersLearnOnlyFromTimeouts)$$' .
	@echo "==> . alone, with $(GO_MIN), the oldest Go the library supports: go test, with every analyzer of its go vet"
	@[ -n "$(VET_MIN)" ] || { echo "make test: $(GO_MIN)'s \`go tool vet help\` listed no analyzers"; exit 1; }
	GOWORK=off GOTOOLCHAIN=$(GO_MIN) $(GO) test -count=1 -vet=$(VET_MIN) ./...
	@echo "==> release-check"
	@$(MAKE) --no-print-directory release-check

.PHONY: work
work: ## Write go.work so that it joins every module of the repository.
	@$(GO) run ./tools/releasecheck -work

.PHONY: tidy
tidy: ## go mod tidy in every module, against the modules as HEAD would publish them.
	$(GO) run ./tools/releasecheck -tidy

.PHONY: release-check
release-check: ## Publish every module of HEAD into a local module proxy and use them as a new user would (minutes: cold builds at the oldest versions, library tests).
	$(GO) run ./tools/releasecheck -go $(GO_MIN)

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

.PHONY: demo-overload
demo-overload: ## Inbound overload: fusebox's shedder vs go-zero's and Kratos's, same handlers, 3 runs a cell (~30 min): out/overload.md and out/overload.svg.
	@mkdir -p $(OUT)
	cd overload && $(GO) run ./cmd/overload run -out $(OUT) -dur 3s -runs 3

.PHONY: demo-callgraph
demo-callgraph: ## Three tiers at 1× and 3× capacity: fusebox's throttle and shedder vs go-zero's and none, over loopback (~5 min): out/callgraph.md.
	@mkdir -p $(OUT)
	cd overload && $(GO) run ./cmd/callgraph run -out $(OUT) -dur 5s -runs 3 -x 1,3

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
		$(OUT)/executor.test -test.run '^$$' -test.bench 'BenchmarkCall|BenchmarkReject|BenchmarkBaseline' -test.benchmem -test.benchtime 200ms -test.count 1 || exit 1; \
	done | tee $(OUT)/bench-call.txt
	$(GO) run ./tools/benchratio < $(OUT)/bench-call.txt

COMPARE_FLAGS ?=

.PHONY: compare
compare: ## fusebox side by side with gobreaker, failsafe-go, hystrix-go, go-resiliency, ants, and its adaptive limit beside failsafe-go's (~2 min; out/compare/).
	@mkdir -p $(OUT)/compare
	cd compare && $(GO) run ./cmd/report -out $(OUT)/compare $(COMPARE_FLAGS)
	@echo "adaptive limits, in loadtest's finite-capacity harness (virtual time):"
	cd compare && $(GO) test -count=1 -run '^TestAdaptiveBesideFailsafe$$' -v . > $(OUT)/compare/adaptive.log; rc=$$?; \
		grep -E 'adaptive_test|^(ok|FAIL|---)' $(OUT)/compare/adaptive.log | tee $(OUT)/compare/adaptive.txt; exit $$rc

.PHONY: compare-throttle
compare-throttle: ## Client-side throttling beside go-zero, Kratos and failsafe-go: a 60 s overload in virtual time (~10 s; out/compare/throttle.txt).
	@mkdir -p $(OUT)/compare
	cd compare && FUSEBOX_THROTTLE_FULL=1 FUSEBOX_THROTTLE_OUT=$(OUT)/compare $(GO) test -count=1 -run '^Test(ThrottleComparison|ThrottlePriorities)$$' -v . \
		| grep -E 'critical .* successful|^(ok|FAIL|---)'
	cat $(OUT)/compare/throttle.txt

# Fuzzing: every fuzz target of the repository (each `func Fuzz...` in a
# tracked _test.go file, in whichever module holds it), one after the other,
# FUZZ_TIME each. The fuzzer minimizes every new interesting input before it
# fuzzes on, reporting 0 execs/s meanwhile; FUZZ_MINIMIZE_TIME bounds each
# minimization so that the time goes to fuzzing. FUZZ_FLAGS adds flags, e.g.
# FUZZ_FLAGS=-parallel=1 on a shared machine.
FUZZ_MINIMIZE_TIME ?= 2s
FUZZ_FLAGS         ?=

.PHONY: fuzz
fuzz: ## Every fuzz target of the repository (breaker against its models, fleet's decoder), FUZZ_TIME each.
	@set -e; for f in $$(git grep -l '^func Fuzz' -- '*_test.go'); do \
		d=$$(dirname $$f); \
		for n in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$f); do \
			echo "==> $$d $$n"; \
			(cd $$d && $(GO) test -run '^$$' -fuzz "^$$n\$$" -fuzztime $(FUZZ_TIME) \
				-fuzzminimizetime $(FUZZ_MINIMIZE_TIME) $(FUZZ_FLAGS) .); \
		done; \
	done


# Shadow mode's cost per call: shadow beside enforce, from bench-call's rounds.
.PHONY: bench-shadow
bench-shadow: bench-call ## Shadow mode's per-round ratio to enforce mode (target ≤ 1.05×).
	grep -E '^BenchmarkCallShadow' $(OUT)/bench-call.txt | $(GO) run ./tools/benchratio -base enforce

# fuseredis: its tests and benchmarks start their own redis-server (the
# redis-server target installs it; make test depends on it already).
.PHONY: bench-redis
bench-redis: redis-server ## fuseredis beside plain go-redis on a local redis-server (GET, parallel GET, 10-GET pipeline): BENCH_COUNT interleaved rounds, per-round ratios.
	@mkdir -p $(OUT)
	cd fuseredis && $(GO) test -c -o $(OUT)/fuseredis.test .
	for i in $$(seq $(BENCH_COUNT)); do \
		(cd fuseredis && $(OUT)/fuseredis.test -test.run '^$$' -test.bench . -test.benchmem -test.benchtime 200ms -test.count 1) || exit 1; \
	done | tee $(OUT)/bench-redis.txt
	$(GO) run ./tools/benchratio -base go-redis < $(OUT)/bench-redis.txt
	@echo "command by command (BenchmarkInterleaved), fuseredis time / go-redis time:"
	@for name in $$(grep -o '^BenchmarkInterleaved/[^ ]*' $(OUT)/bench-redis.txt | sort -u); do \
		grep "^$$name " $(OUT)/bench-redis.txt | awk '{for (i = 1; i < NF; i++) if ($$(i+1) == "fuseredis/go-redis") print $$i}' | sort -n | \
		awk -v name=$$name '{a[NR] = $$1} END {m = (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2; \
			printf "  %-40s median %.3f×  range %.3f–%.3f (%d rounds)\n", name, m, a[1], a[NR], NR}'; \
	done

# Retries with a budget and hedged calls (package policy): four scenarios
# played in virtual time (testing/synctest) by the loadtest module's tests.
.PHONY: demo-policies
demo-policies: ## Retry storm, hung supplier, slow tail, overload: policies side by side in virtual time (~10 s): tables in out/policies.txt.
	@mkdir -p $(OUT) && rm -f $(OUT)/policies.txt
	cd loadtest && POLICY_SCENARIO_OUT=$(OUT) $(GO) test -count=1 -run '^(TestRetryStorm|TestRetryHungSupplier|TestHedgeTail|TestHedgeOverload)$$' .
	@cat $(OUT)/policies.txt

# fusesql's and fusepgx's tests, make demo-db, make bench-db and make
# bench-pgx start PostgreSQL servers of their own (initdb into a
# temporary directory, as the user postgres when run as root): the Debian
# package, installed here when missing (its binaries live in
# /usr/lib/postgresql/<version>/bin).
.PHONY: postgresql
postgresql: ## Install PostgreSQL (Debian package) for fusesql's and fusepgx's tests, if missing.
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1 || { \
		echo "PostgreSQL not found: installing the Debian package"; \
		SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		$$SUDO apt-get update && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y postgresql; }

test: postgresql

# make demo-db DEMO_DB_LOCK=1m locks the orders table for a minute (the default
# is 20 s, so that the two runs take about a minute together).
DEMO_DB_LOCK ?= 20s

.PHONY: demo-db
demo-db: postgresql ## A shop over one pool of 20 PostgreSQL connections, orders locked: plain database/sql vs fusesql, then plain pgxpool vs fusepgx (~2 min): tables and chart in out/.
	cd fusesql && $(GO) run ./internal/demodb -out $(OUT) -lock $(DEMO_DB_LOCK)
	cd fusepgx && $(GO) run ./internal/demopgx -out $(OUT) -lock $(DEMO_DB_LOCK)
	@echo "database/sql (out/demo-db.md):"; cat $(OUT)/demo-db.md
	@echo "pgx's own pool (out/demo-pgx.md):"; cat $(OUT)/demo-pgx.md

BENCH_DB_TIME ?= 1s

.PHONY: bench-db
bench-db: postgresql ## fusesql's QueryRowContext+Scan of SELECT 1 beside plain database/sql on a real local PostgreSQL: BENCH_COUNT interleaved rounds, per-round ratios.
	@mkdir -p $(OUT)
	cd fusesql && $(GO) test -c -o $(OUT)/fusesql.test .
	for i in $$(seq $(BENCH_COUNT)); do \
		(cd fusesql && $(OUT)/fusesql.test -test.run '^$$' -test.bench 'BenchmarkQueryRow|BenchmarkOverhead' -test.benchmem -test.benchtime $(BENCH_DB_TIME) -test.count 1) || exit 1; \
	done | tee $(OUT)/bench-db.txt
	$(GO) run ./tools/benchratio -base plain < $(OUT)/bench-db.txt
	@echo "paired calls, fusesql/plain per round, and the median:"
	@for c in request deadline background own-timeout; do \
		grep "^BenchmarkQueryRowPaired/$$c" $(OUT)/bench-db.txt | awk '{for (i = 1; i < NF; i++) if ($$(i+1) == "fusesql/plain") print $$i}' | sort -n | \
			awk -v c=$$c '{r[NR] = $$1; all = all " " $$1} END {m = NR % 2 ? r[(NR+1)/2] : (r[NR/2] + r[NR/2+1]) / 2; printf "  %-10s median %.3f  rounds:%s\n", c, m, all}'; \
	done

.PHONY: bench-pgx
bench-pgx: postgresql ## fusepgx's QueryRow+Scan of SELECT 1 beside plain pgxpool on a real local PostgreSQL: BENCH_COUNT interleaved rounds, per-round ratios.
	@mkdir -p $(OUT)
	cd fusepgx && $(GO) test -c -o $(OUT)/fusepgx.test .
	for i in $$(seq $(BENCH_COUNT)); do \
		(cd fusepgx && $(OUT)/fusepgx.test -test.run '^$$' -test.bench 'BenchmarkQueryRow' -test.benchmem -test.benchtime $(BENCH_DB_TIME) -test.count 1); \
	done | tee $(OUT)/bench-pgx.txt
	$(GO) run ./tools/benchratio -base plain < $(OUT)/bench-pgx.txt
	@echo "paired calls, fusepgx/plain per round (summed times, and median call times), and the median of the rounds:"
	@for m in fusepgx/plain p50-fusepgx/plain; do for c in request deadline; do \
		grep "^BenchmarkQueryRowPaired/$$c" $(OUT)/bench-pgx.txt | awk -v m=$$m '{for (i = 1; i < NF; i++) if ($$(i+1) == m) print $$i}' | sort -n | \
			awk -v c=$$c -v m=$$m '{r[NR] = $$1; all = all " " $$1} END {x = NR % 2 ? r[(NR+1)/2] : (r[NR/2] + r[NR/2+1]) / 2; printf "  %-18s %-10s median %.3f  rounds:%s\n", m, c, x, all}'; \
	done; done

# Inbound protection (docs/inbound.md): inbound.Handler per route, and
# priorities, over loopback HTTP; the per-request cost of the middleware.
.PHONY: demo-inbound
demo-inbound: ## A slow /search beside /home, 3x capacity for a minute, without and with inbound.Handler; then priorities (~4 min): tables, JSON and SVG charts in out/.
	cd loadtest && $(GO) run ./cmd/loadtest inbound -format svg -out $(OUT)
	cd loadtest && $(GO) run ./cmd/loadtest priorities -format svg -out $(OUT)

.PHONY: bench-inbound
bench-inbound: ## inbound.Handler beside a bare handler, BENCH_COUNT counts, medians.
	@mkdir -p $(OUT)
	$(GO) test -run '^$$' -bench BenchmarkHandler -benchmem -count $(BENCH_COUNT) -benchtime 200ms ./fusehttp/inbound | tee $(OUT)/bench-inbound.txt
	@$(GO) run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da $(OUT)/bench-inbound.txt 2>/dev/null || true

# Network faults (faults/, see docs/faults.md): Toxiproxy is embedded in the
# test process as a Go module, and the supplier process is the test binary
# itself, so make test runs them with nothing to install.
.PHONY: faults
faults: ## The network-fault tests (Toxiproxy embedded), verbose: trip times, reasons, recovery (~20 s).
	cd faults && $(GO) test -race -count=1 -v ./...

# The fleet module's Sentinel test starts three redis-sentinel processes
# (Debian package redis-sentinel); its cluster test uses redis-cli, which
# comes with redis-tools, a dependency of redis-server.
.PHONY: redis-sentinel
redis-sentinel: ## Install redis-sentinel (Debian package) if missing, for the fleet module's failover test.
	@command -v redis-sentinel >/dev/null 2>&1 || { \
		SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		$$SUDO apt-get update && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y redis-sentinel redis-tools; }

test: redis-sentinel

# The fleet at 10, 100 and 1,000 replicas of 100 suppliers each, in virtual
# time (about 4 minutes on 2 cores); make test runs the 10-replica size.
.PHONY: fleet-scale
fleet-scale: ## The fleet's cost and speed at 10, 100 and 1,000 replicas (virtual time, ~4 min): table in out/fleet-scale.md.
	@mkdir -p $(OUT)
	cd fleet && FLEET_SCALE=10,100,1000 FLEET_SCALE_OUT=$(OUT)/fleet-scale.md $(GO) test -count=1 -timeout 30m -run '^TestVirtualFleetAtScale$$' -v . | grep -v '^=== '

# The fleet on a Redis Cluster: three masters without replicas, one lost;
# then three masters with a replica each, one failing over (about 12 s).
.PHONY: fleet-cluster
fleet-cluster: redis-sentinel ## The fleet's Redis Cluster tests alone, verbose: a lost master, a failover to its replica.
	cd fleet && $(GO) test -race -count=1 -v -run '^TestCluster(LosingOneMaster|FailoverToAReplica)$$' . | grep -v 'pool.go'

# The adaptive limit (docs/adaptive.md): its cost per call beside a fixed
# bulkhead, and the sweep of fixed sizes its goodput is compared with.
.PHONY: bench-adaptive
bench-adaptive: ## The adaptive limit's per-round ratio to a fixed bulkhead, BENCH_COUNT interleaved rounds (target ≤ 5 ns added).
	@mkdir -p $(OUT)
	$(GO) test -c -o $(OUT)/executor.test ./executor
	for i in $$(seq $(BENCH_COUNT)); do \
		$(OUT)/executor.test -test.run '^$$' -test.bench 'BenchmarkCallAdaptive' -test.benchmem -test.benchtime 200ms -test.count 1 || exit 1; \
	done | tee $(OUT)/bench-adaptive.txt
	$(GO) run ./tools/benchratio -base static < $(OUT)/bench-adaptive.txt

# Instructions a call executes, counted by Valgrind (cachegrind): the count
# moves far less with what else the machine runs than a timed benchmark.
.PHONY: valgrind
valgrind: ## Install Valgrind (Debian package) if missing, for make bench-instr.
	@command -v valgrind >/dev/null 2>&1 || { \
		SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		$$SUDO apt-get update && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y valgrind; }

.PHONY: bench-instr
bench-instr: valgrind ## Instructions per Submit+Await beside a bare goroutine (caller's context Background, cancellable, and fn reading a value), and added by the adaptive limit, under Valgrind (~2 min).
	@mkdir -p $(OUT)
	$(GO) test -c -o $(OUT)/executor.test ./executor
	{ $(GO) run ./tools/instrcount -test $(OUT)/executor.test -top 8 \
		'go+chan=^BenchmarkCall$$/^background$$/^go\+chan$$/^serial$$' \
		'fusebox=^BenchmarkCall$$/^background$$/^fusebox$$/^serial$$' \
		'cancellable=^BenchmarkCall$$/^cancellable$$/^fusebox$$/^serial$$' \
		'+value=^BenchmarkCall$$/^cancellable$$/^fusebox\+value$$/^serial$$' && \
	  $(GO) run ./tools/instrcount -test $(OUT)/executor.test -top 8 \
		'static=^BenchmarkCallAdaptive$$/^static$$/^serial$$' \
		'adaptive=^BenchmarkCallAdaptive$$/^adaptive$$/^serial$$'; } | tee $(OUT)/bench-instr.txt

.PHONY: sweep-adaptive
sweep-adaptive: ## Goodput of fixed Workers 1…256 beside the adaptive limit in the scenarios A–E (~1 min).
	@mkdir -p $(OUT)
	cd loadtest && FUSEBOX_SWEEP=1 $(GO) test -run '^TestAdaptiveSweep$$' -count=1 -v -timeout 30m . | tee $(OUT)/sweep-adaptive.txt

.PHONY: soak-adaptive
soak-adaptive: ## The adaptive limit over 10 minutes of virtual time in each healthy scenario A–E, and cold starts under three other seeds: no opening, no drift (~1 min).
	@mkdir -p $(OUT)
	cd loadtest && FUSEBOX_SOAK=1 $(GO) test -run '^TestAdaptiveSoak$$' -count=1 -v -timeout 30m . | tee $(OUT)/soak-adaptive.txt

.PHONY: demo-adaptive
demo-adaptive: ## The adaptive limit following a capacity step (scenario C), beside a fixed 32, over loopback HTTP in real time, with a chart (~1 min; out/adaptive.png).
	cd loadtest && $(GO) run ./cmd/loadtest adaptive -out $(OUT)
