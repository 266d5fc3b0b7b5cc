// Package executor protects calls to one supplier: it composes a circuit
// breaker, a bulkhead of worker slots, an invocation timeout and futures.
//
// The story: payments hang. Every payment call holds one of the executor's
// slots; once the slots are held by calls far older than payments normally
// take (stuck, see StuckConfig), the call that finds them all taken is
// refused with ErrSaturated and, in that same call, trips the breaker. From
// then on payment calls fail fast with breaker.ErrOpen, touching nothing,
// while the rest of the service keeps its workers. After the reset timeout,
// which New insists is longer than the invocation timeout, every call
// admitted before the trip has timed out and given its slot back, so the
// one probe the breaker lets through finds a free slot; its outcome closes
// the breaker or opens it again.
//
//	ex, err := executor.New("payments", executor.Config{
//		Workers:             10,
//		InvocationTimeout: 30 * time.Second,
//		Breaker:           breaker.Config{ResetTimeout: 45 * time.Second},
//	})
//	...
//	receipt, err := executor.Do(ctx, ex, func(ctx context.Context) (Receipt, error) {
//		return payments.Charge(ctx, order)
//	})
//	switch {
//	case errors.Is(err, breaker.ErrOpen), errors.Is(err, executor.ErrSaturated),
//		errors.Is(err, executor.ErrBusy):
//		// refused without calling payments: degrade
//	case errors.Is(err, executor.ErrTimeout):
//		// payments did not answer in 30 s
//	}
//
// Submit returns a future instead of waiting; Group keeps one executor per
// named supplier.
//
// # Stuck or busy
//
// A full bulkhead is not always a sick supplier: a burst, a cold start or a
// short pause fill it too, with calls that end in a moment. A call that
// finds the bulkhead full of such young calls is refused alone
// (ErrBusy, Stats.Rejected.Busy, Config.OnBusy) and the breaker stays
// closed. Only a stuck bulkhead trips it: half of its slots held by calls
// older than 8 × the p99 of the supplier's recent successful calls
// (Stats.LatencyP99), at least 0.5 s and at most half the invocation
// timeout. StuckConfig tunes this, or gives back the literal rule (trip on
// any saturation). Size a bulkhead at twice rate × mean latency at the peak
// rate; docs/design.md in the repository has the measurements and the
// sizing rules.
//
// Group.Reconfigure (and Executor.Reconfigure) put a new configuration in
// force on running executors, validated whole first, without dropping a
// call in flight or losing a breaker's state. Stats.Durations holds
// histograms of call durations by outcome, which the metrics and fuseotel
// modules export.
//
// Nothing runs at import, and an idle executor holds no goroutine: a
// call's goroutine lives while the call runs, a call that times out has a
// short-lived goroutine record its timeout, and the executor's deadline
// timer, armed while calls are in flight, stops by itself once no deadline
// is left. Executors therefore also work inside testing/synctest bubbles.
//
// User code runs on these goroutines: fn on the call's goroutine;
// breaker.Config.Classify, the ErrorKinds' Match functions and ReadyToTrip
// there when fn returns, or, when the call times out, on the goroutine that records that
// call's timeout (one per timed-out call, so a classifier that blocks
// delays only its own call's future); transition listeners on whichever of
// the submitter, the call or its timeout caused the transition. A panic in
// any of them is recovered: fn's or a classifier's resolves the call's
// future with a *breaker.PanicError naming it (a failure on the breaker), a
// listener's is logged. A callback that ends its goroutine with
// runtime.Goexit (t.FailNow in a test's classifier or listener) instead of
// returning is treated as one that panicked. Close returns by its
// context's deadline whatever that code is doing.
package executor
