// Package compare runs the same work through fusebox and the resilience
// libraries Go programs use today (sony/gobreaker, failsafe-go, hystrix-go,
// go-resiliency, go-zero's core/breaker, Sentinel-golang, an ants pool per
// supplier, a bare goroutine plus channel), so that users can compare them
// with numbers they can reproduce. It is a module of its own so that none
// of them becomes a dependency of fusebox.
//
// It measures the closed-breaker overhead (Cases), a rejection's cost,
// submit + await through a bounded pool, the idle footprint of 10,000
// suppliers (Footprint), behaviour under a hung supplier (Hung, Sequential,
// Late), retries and hedges (PolicyScenarios, RunPolicy) and client-side
// throttling. Every library is configured alike from one Settings value;
// Describe says how each maps it. cmd/report prints the tables with each
// peer's ratio to fusebox measured in the same run.
package compare
