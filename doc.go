// Package fusebox is the root of a library that keeps one hung downstream
// service from taking a whole service down.
//
// Each supplier gets its own bulkhead (a bounded set of worker slots running
// protected calls that return futures); a circuit breaker trips the moment
// that bulkhead saturates instead of after the first timeout; half-open probes
// start only after a reset timeout longer than the invocation timeout, so the
// probe always finds a free slot.
//
// The packages, from the leaves up:
//
//   - [github.com/fusebox-go/fusebox/breaker]: the circuit breaker state machine; no goroutines, no timers.
//
// This package itself holds no code; it documents the layout and its tests
// enforce which package may import which.
package fusebox
