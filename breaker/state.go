package breaker

import (
	"fmt"
	"time"
)

// State is where a breaker stands.
type State uint8

// The states. Closed, Open and HalfOpen are the automatic ones; ForcedOpen
// and Disabled are operator overrides that only [Breaker.Reset] ends.
const (
	// Closed admits every call and counts failures.
	Closed State = iota
	// Open rejects every call with ErrOpen until the reset timeout has passed.
	Open
	// HalfOpen admits a limited number of probes; their results decide
	// between Closed and Open. Everyone else fails fast.
	HalfOpen
	// ForcedOpen rejects every call until Reset; no timer lets probes through.
	ForcedOpen
	// Disabled admits every call and still records outcomes, but never trips.
	Disabled
)

var stateNames = [...]string{"closed", "open", "half-open", "forced-open", "disabled"}

// String returns the lower-case name of the state, e.g. "half-open".
func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", s)
}

// Reason says why a transition happened.
type Reason uint8

// noReason is the reason of a breaker that has never changed state
// ("none"). It is outside the block of the reasons so that go doc lists
// them under Reason.
const noReason Reason = 0

// The reasons.
const (
	// ConsecutiveFailures: Config.ConsecutiveFailures failures in a row.
	ConsecutiveFailures Reason = iota + 1
	// ErrorKind: one of Config.ErrorKinds reached its own consecutive
	// threshold; Event.Kind names it.
	ErrorKind
	// FailureRate: the failure rate over the sliding window reached
	// Config.FailureRate.
	FailureRate
	// SlowCallRate: the slow-call rate over the sliding window reached
	// Config.SlowCallRate.
	SlowCallRate
	// Saturation: the bulkhead in front of the supplier had no free slot,
	// held by stuck calls (reported by the executor, whose stuck criterion
	// decides, or by anyone through [Breaker.Trip]).
	Saturation
	// QueueFull: the bulkhead's queue was full (reported by the executor).
	// The executor closes the breaker again, without a probe, once the
	// queue has drained to its low-water mark (QueueDrained).
	QueueFull
	// Manual: an operator's action. Event.To says which: Open for
	// [Breaker.Trip] (called with Manual), Closed for [Breaker.Reset],
	// ForcedOpen for [Breaker.ForceOpen], Disabled for [Breaker.Disable].
	Manual
	// ResetTimeout: the open period ended and the first probe was admitted.
	ResetTimeout
	// ProbesSucceeded: the required number of half-open probes succeeded.
	ProbesSucceeded
	// ProbeFailed: a half-open probe failed.
	ProbeFailed
	// ProbeDeferred: a probe was admitted but found no free slot in the
	// bulkhead (calls that ignore their context still hold them), so the
	// breaker re-opened without counting a failed attempt.
	ProbeDeferred
	// QueueDrained: a breaker opened for QueueFull closed because the queue
	// drained below its low-water mark.
	QueueDrained
	// Remote: another replica of the service said so (see remote.go), or
	// the supplier itself (an HTTP Retry-After, see fusehttp.Transport):
	// [Breaker.OpenRemote] or [Breaker.CloseRemote].
	Remote
	// ReadyToTrip: Config.ReadyToTrip returned true.
	ReadyToTrip
)

// numReasons sizes the arrays indexed by Reason.
const numReasons = int(ReadyToTrip) + 1

var reasonNames = [...]string{
	"none", "consecutive-failures", "error-kind", "failure-rate", "slow-call-rate",
	"saturation", "queue-full", "manual", "reset-timeout", "probes-succeeded",
	"probe-failed", "probe-deferred", "queue-drained", "remote", "ready-to-trip",
}

// String returns the kebab-case name of the reason, e.g. "saturation".
func (r Reason) String() string {
	if int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return fmt.Sprintf("Reason(%d)", r)
}

// opens reports whether r is the reason of some transition to Open.
func (r Reason) opens() bool {
	switch r {
	case noReason, ResetTimeout, ProbesSucceeded, QueueDrained:
		return false
	}
	return int(r) < numReasons
}

// Outcome is the verdict on one call, as the classifier sees it.
type Outcome uint8

// The outcomes.
const (
	// Success counts towards closing and clears consecutive-failure counts.
	Success Outcome = iota
	// Failure counts towards tripping.
	Failure
	// Ignored counts for nothing (the caller cancelled, a business refusal the
	// supplier answered correctly, ...). A half-open probe that ends Ignored
	// gives its place to the next caller.
	Ignored
)

var outcomeNames = [...]string{"success", "failure", "ignored"}

// String returns "success", "failure" or "ignored".
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return fmt.Sprintf("Outcome(%d)", o)
}

// Event describes one real transition (never X→X). Events of one breaker are
// delivered to Config.OnTransition one at a time, in the order the
// transitions happened.
type Event struct {
	Name   string // Config.Name of the breaker
	From   State
	To     State
	Reason Reason
	// Kind is the name of the ErrorKind rule that tripped, if Reason is ErrorKind.
	Kind string
	// Time is when the transition happened.
	Time time.Time
	// Duration is how long the breaker was in From.
	Duration time.Duration
	// OpenUntil is when the first probe may start, if To is Open (zero
	// for ForcedOpen, which has no end).
	OpenUntil time.Time
	// Shadow marks the transition of a breaker whose verdicts are not
	// enforced (executor.Config.Shadow): nothing was refused because of it.
	Shadow bool
	// Generation counts transitions: it is 1 for the first one.
	Generation uint64
	// Err is the error of the call that caused the transition, when one
	// did: the failure that reached a consecutive or per-kind threshold or
	// tipped the failure rate, or the failed probe. It is nil for the other
	// reasons (saturation, queue full, operators' actions, the reset
	// timeout, successful probes, a slow-call rate tipped by a success).
	Err error
}

// String formats the event for logs: "payments: closed → open (saturation)".
func (e Event) String() string {
	s := fmt.Sprintf("%s → %s (%s", e.From, e.To, e.Reason)
	if e.Kind != "" {
		s += " " + e.Kind
	}
	s += ")"
	if e.Shadow {
		s += " [shadow]"
	}
	if e.Name != "" {
		s = e.Name + ": " + s
	}
	return s
}
