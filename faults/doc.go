// Package faults holds no API: its tests put Toxiproxy, embedded in the
// test process, between fusebox's transports (fusehttp, fusegrpc) and real
// servers on 127.0.0.1, and check what the executor does under faults of
// the network rather than of a handler: a black-holed connection (the
// timeout toxic), connections reset by the peer, latency with jitter, a
// body that trickles in, and a supplier process stopped with SIGSTOP and
// resumed.
//
// For each fault the tests assert how soon and why the breaker trips (by
// saturation of stuck slots for a hang, well before the invocation
// timeout; by consecutive failures for resets; not at all for jitter),
// that every slot is free once the calls have ended, and that the breaker
// closes after the fault. docs/faults.md describes what a user sees,
// with the numbers these tests measure.
//
// Run them with `go test ./...` in this directory (make test runs them);
// they need nothing but the loopback interface.
package faults
