// Package hook carries what package breaker lends the executor and nobody
// else: the operations that connect a breaker to a bulkhead and let the
// executor count outcomes itself. They are not part of the breaker's API.
//
// Package breaker sets each variable in its init function, and the executor
// asserts each to its function type once, when its own package variables are
// initialized, which Go does only after every package it imports is
// initialized. The variables are of type any so that this package imports
// nothing (breaker imports it).
package hook

var (
	// Classify is func(*breaker.Breaker, error) (breaker.Outcome, error):
	// the outcome Permit.Done would record for the error, and a
	// *breaker.PanicError if a user callback panicked deciding it.
	Classify any

	// Record is func(breaker.Permit, breaker.Outcome, error) error:
	// Permit.Done with the outcome already decided. The error is a
	// *breaker.PanicError from an ErrorKinds Match.
	Record any

	// Reject is func(breaker.Permit, breaker.Reason): the call could not
	// run because the bulkhead was full (Saturation or QueueFull). A
	// closed breaker trips with that reason; a half-open probe re-opens it
	// with ProbeDeferred.
	Reject any

	// Probe is func(breaker.Permit) bool: whether the permit is a half-open
	// probe.
	Probe any

	// Drained is func(*breaker.Breaker) bool: close a breaker opened for
	// QueueFull, with reason QueueDrained, because its queue has drained.
	Drained any

	// Current is func(breaker.Permit) bool: whether the permit was
	// admitted under the breaker's current generation (no transition
	// since). Statistics that decide learn only from such calls.
	Current any
)
