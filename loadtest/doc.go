// Package loadtest reproduces the worker-exhaustion outage that fusebox
// exists to prevent, and measures it.
//
// A shop has a fixed number of request workers (100 by default). It serves
// catalog requests, which never touch the payment supplier, and payment
// requests, which do. The supplier answers in 100 ms while healthy and hangs
// (it honours cancellation, but never answers) during an outage window. A
// request that finds no free shop worker is refused at once.
//
// RunExhaustion plays identical traffic against three ways of protecting the
// payment call:
//
//   - ModeTimeout: the invocation timeout only (30 s by default). Every
//     payment holds a shop worker for the whole timeout, so the shop runs out
//     of workers after Workers / PaymentRate seconds (10 s) and the catalog
//     goes down with the payments.
//   - ModeBreaker: a consecutive-failure breaker (package breaker) around the
//     call. It learns nothing until the first timeout, so it opens only after
//     InvocationTimeout + (Threshold−1)/PaymentRate into the outage (30.4 s).
//   - ModeFusebox: an executor (package executor) with a bulkhead of 10
//     slots. The 11th concurrent payment finds no slot after 1 s; once half
//     the slots hold calls older than 8 × the supplier's p99 (1.3 s into
//     the outage) the call that finds it full trips the breaker; the
//     catalog keeps its workers.
//
// RunQueue plays the second story of docs/design.md: an asynchronous supplier
// behind a bounded queue that fills because it is fed faster than it is
// drained, with and without a low-water mark for closing the breaker again.
//
// RunBurst plays a healthy supplier whose bulkhead still fills: Poisson
// arrivals from a cold start, lognormal latencies and short stalls. It runs
// the executor's default stuck criterion (a full bulkhead of young calls
// refuses one call and trips nothing) beside the literal rule (every full
// bulkhead trips) on identical traffic, and counts the false trips of each.
// The business errors of the exhaustion scenario are random (seeded), so
// that runs of them happen as in real traffic.
//
// RunRetryStorm, RunRetryHung, RunHedgeTail and RunHedgeOverload play the
// policies of package policy (retries within a budget, hedged calls)
// against a supplier that fails, hangs, has a slow tail or is overloaded,
// side by side with no policy and with the naive one; they run on the real
// clock and are meant for testing/synctest (make demo-policies).
//
// RunInbound plays the inbound story of docs/inbound.md: a service with 100
// workers whose /search route waits on a supplier that slows down, beside
// a fast /home, without and with inbound.Handler per route. RunPriorities
// plays one overloaded route with critical, default and sheddable
// requests, without and with a critical share.
//
// # Two transports, one runner
//
// With InProcess the load generator calls the shop, and the shop the
// supplier, as plain function calls. The runner is driven by time.Sleep,
// time.Now and goroutines only, so under testing/synctest the scenarios run at
// full scale (30 s timeouts, minutes of scenario time) in milliseconds, with
// exact timings. With HTTP the shop and the supplier are real HTTP servers on
// 127.0.0.1, and Speed compresses scenario time: at speed 10 a 30 s timeout
// lasts 3 s of wall time. Every time in a report is scenario time, whatever
// the speed; in HTTP runs the loopback round trips are stretched by the same
// factor.
//
// Every loop is bounded: a run sends at most rate × duration requests of each
// kind, stops by itself at the end of its Duration, cancels what is still in
// flight, and closes everything it started (executors, servers, connections)
// before it returns.
//
// Reports have a per-second timeline, a summary per mode, JSON
// (WriteJSON), a terminal table (WriteTable) and a chart (SaveChart).
package loadtest
