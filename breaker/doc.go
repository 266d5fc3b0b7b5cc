// Package breaker is a lock-free circuit breaker with lazy recovery.
//
// A breaker sits in front of one supplier. While it is Closed every call is
// admitted and its outcome counted; when a trip rule fires (consecutive
// failures, per-kind consecutive failures, a failure or slow-call rate over a
// sliding window, or a signal from outside such as a bulkhead full of stuck
// calls) it
// opens, and calls fail fast with ErrOpen. After the reset timeout the next
// caller is admitted as a probe (HalfOpen); the probes' results close the
// breaker or open it again.
//
// The story of one supplier:
//
//	b, err := breaker.New(breaker.Config{Name: "payments", ResetTimeout: 45 * time.Second})
//	...
//	p, err := b.Allow()
//	if err != nil {
//		return fallback() // errors.Is(err, breaker.ErrOpen): fail fast, nothing was called
//	}
//	resp, err := payments.Charge(ctx, order)
//	p.Done(err) // classified: nil success, context.Canceled ignored, other errors failures
//
// Nothing here runs in the background: Open → HalfOpen is decided by the
// next Allow after the reset timeout, so a breaker needs no Close and an
// idle one costs a couple of hundred bytes. Allow and Done are lock-free. A
// result that arrives after a transition (a call admitted before the
// breaker tripped, finishing while it is half-open) never decides a
// half-open verdict or extends an open period; it is counted in Stats.Late.
// docs/design.md in the repository explains the design.
//
// Transition events go to Config.OnTransition one at a time, in order; the
// listener may call any method of the breaker.
package breaker
