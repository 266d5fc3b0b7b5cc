// Package fusebox is the root of a library that keeps one hung downstream
// service from taking a whole service down. It holds no code: this page is
// the map of the library.
//
// Each supplier (a payment service, a recommendations API, one HTTP
// host) gets its own bulkhead, a bounded set of slots running
// protected calls that return futures, and a circuit breaker that trips the
// moment that bulkhead saturates instead of after the first timeout.
// Half-open probes start only after a reset timeout longer than the
// invocation timeout, so the probe always finds a free slot.
//
// # Where to start
//
// Most programs need only the executor package:
// [github.com/fusebox-go/fusebox/executor.New] protects one supplier,
// [github.com/fusebox-go/fusebox/executor.Do] and
// [github.com/fusebox-go/fusebox/executor.Submit] make calls through it, and
// [github.com/fusebox-go/fusebox/executor.NewGroup] keeps one executor per
// named supplier. For outgoing HTTP, put a
// [github.com/fusebox-go/fusebox/fusehttp.Transport] in an http.Client and
// every host gets its own executor.
//
// # Packages
//
// From the leaves up; each package imports only those above it:
//
//   - [github.com/fusebox-go/fusebox/breaker]: the circuit breaker state
//     machine (consecutive failures, failure and slow-call rates, per-error
//     kinds, half-open probes, backoff); no goroutines, no timers. Usable on
//     its own around any call.
//   - [github.com/fusebox-go/fusebox/future]: Future[T], completed once by a
//     Promise[T] and awaited with a context; All, Any and First.
//   - [github.com/fusebox-go/fusebox/bulkhead]: per-supplier slot
//     accounting with an optional FIFO queue; it starts nothing.
//   - [github.com/fusebox-go/fusebox/executor]: breaker + bulkhead +
//     invocation timeout + futures for one supplier; Lease; Group; transition
//     logging with log/slog.
//   - [github.com/fusebox-go/fusebox/fusehttp]: an http.RoundTripper with
//     one executor per host.
//   - [github.com/fusebox-go/fusebox/config]: a Group's configuration from
//     a JSON file, or from a section of the program's own YAML, TOML or
//     JSON configuration.
//
// # Modules around the library
//
// Integrations that bring dependencies are modules of their own, released
// with the library at the same version, so that this module depends on
// nothing heavy:
//
//   - github.com/fusebox-go/fusebox/metrics: a Prometheus collector for a
//     Group.
//   - github.com/fusebox-go/fusebox/fuseotel: the same instruments through
//     OpenTelemetry metrics.
//   - github.com/fusebox-go/fusebox/fusegrpc: gRPC client interceptors, one
//     executor per target.
//   - github.com/fusebox-go/fusebox/fleet: links the Groups of a service's
//     replicas through Redis, so that the fleet sheds a hung supplier
//     together and probes it once.
//   - github.com/fusebox-go/fusebox/loadtest: the worker-exhaustion and
//     queue scenarios, and the loadtest command that plays them over
//     loopback HTTP.
//   - github.com/fusebox-go/fusebox/compare: fusebox side by side with
//     other Go resilience libraries.
//
// The design, and the reasoning behind it, is in docs/design.md of the
// repository; the README has runnable programs and measured numbers.
package fusebox
