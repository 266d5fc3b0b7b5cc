// Package readiness reports whether a service is ready for traffic,
// judging by the circuit breakers of its suppliers, for a load balancer's
// or an orchestrator's readiness probe. It is opt-in: nothing happens
// unless you mount its handler (or call Report in your own).
//
// The story: a shop calls payments, which it cannot work without, and
// recommendations, which it can. When recommendations' breaker opens the
// shop keeps serving (without recommendations): its readiness stays 200,
// "degraded". When payments' breaker opens, this instance cannot take
// orders: readiness answers 503, "unready", and the load balancer sends the
// traffic elsewhere until the breaker closes again.
//
//	ready, err := readiness.New(readiness.Config{
//		Group:    g,
//		Critical: map[string]bool{"payments": true},
//	})
//	...
//	mux.Handle("GET /readyz", ready)
//
// The handler's body is the service's state alone ({"state":"degraded"}):
// a probe that clients or other tenants can reach learns no supplier's
// name. Config.Details adds the suppliers' lines (at most MaxSuppliers),
// for a Checker on an admin listener.
//
// # The rule
//
// Each supplier is ready while its breaker is closed (or disabled by an
// operator, which admits every call), degraded while half-open (probing)
// or open with its probe due (the next call probes: an instance out of the
// load balancer gets none until it reports 200), and unready while open
// before that, or forced open; in shadow mode (executor.Config.Shadow),
// which refuses nothing, it is ready. The service is unready (503) when
// a critical supplier is unready, degraded (200) when any supplier is not
// ready, and ready (200) otherwise: an open breaker of a non-critical
// supplier never makes the service unready.
//
// Mark a supplier critical only when the instance can do nothing useful
// without it and another instance might still reach it (a local sidecar, a
// per-zone database). A supplier that every instance shares, when it fails,
// fails for all of them: taking them all out of the load balancer turns a
// partial outage into a total one. That is why nothing is critical unless
// listed.
package readiness
