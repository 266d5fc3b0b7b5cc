// Package readiness reports whether a service is ready for traffic,
// judging by the circuit breakers of its suppliers, for a load balancer's
// readiness probe. It is opt-in: nothing happens unless you mount its
// handler (or call Report in your own).
//
//	ready, err := readiness.New(readiness.Config{Group: g, Critical: map[string]bool{"payments": true}})
//	mux.Handle("GET /readyz", ready)
//
// The service is unready (503) only when a critical supplier's breaker is
// open before its probe is due, or forced open; degraded (200) when any
// supplier is not ready; ready (200) otherwise. The body names no
// supplier unless Config.Details asks for it. docs/readiness.md has the
// rule in full and when to mark a supplier critical.
package readiness
