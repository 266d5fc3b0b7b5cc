// Package compare runs the same work through fusebox and the resilience
// libraries Go programs use today, so that users can compare them with
// numbers they can reproduce: github.com/sony/gobreaker/v2,
// github.com/failsafe-go/failsafe-go, github.com/afex/hystrix-go,
// github.com/eapache/go-resiliency/breaker, go-zero's core/breaker,
// Sentinel-golang's circuit breaker, one ants pool per supplier, and a bare
// goroutine plus channel.
//
// It is a module of its own so that none of these libraries becomes a
// dependency of fusebox. Seven comparisons live here:
//
//  1. closed-breaker overhead per call (Cases, group Closed);
//  2. the cost of a rejection while open (group Reject);
//  3. submit + await of a trivial call through a bounded pool (group
//     SubmitAwait);
//  4. the idle footprint of 10,000 suppliers (Footprint);
//  5. behaviour under a hung supplier (Hung, Sequential, Late);
//  6. retries and hedged calls beside failsafe-go's retry and hedge
//     policies and their budget (PolicyScenarios, RunPolicy), and the
//     per-call overhead of each policy (group Policy);
//  7. fusebox's adaptive slot limit beside failsafe-go's adaptivelimiter in
//     loadtest's finite-capacity harness (TestAdaptiveBesideFailsafe, run
//     by make compare).
//
// Every library is configured alike from one Settings value; Describe says
// how each one maps it, including where a library cannot express a setting.
// The benchmarks run with go test -bench (bench_test.go) and, with the other
// measurements, from the report command in cmd/report, which prints the
// tables with each peer's ratio to fusebox measured in the same run.
package compare
