// Package executor protects calls to one supplier: it composes a circuit
// breaker, a bulkhead of worker slots, an invocation timeout and futures.
//
// The story: payments hang. Every payment call holds one of the
// executor's slots; once the slots are held by calls far older than
// payments normally take (stuck, see StuckConfig), the call that finds
// them all taken is refused with ErrSaturated and, in that same call,
// trips the breaker. From then on
// payment calls fail fast with ErrOpen, touching nothing, while the rest of
// the service keeps its workers. After the reset timeout, which New insists
// is longer than the invocation timeout, every call admitted before the
// trip has timed out and given its slot back, so the one probe the breaker
// lets through finds a free slot; its outcome closes the breaker or opens it
// again.
//
//	ex, err := executor.New("payments", executor.Config{
//		Workers:           10,
//		InvocationTimeout: 30 * time.Second,
//		Breaker:           breaker.Config{ResetTimeout: 45 * time.Second},
//	})
//	...
//	receipt, err := executor.Do(ctx, ex, func(ctx context.Context) (Receipt, error) {
//		return payments.Charge(ctx, order)
//	})
//	switch {
//	case errors.Is(err, executor.ErrOpen), errors.Is(err, executor.ErrSaturated):
//		// refused without calling payments: degrade
//	case errors.Is(err, executor.ErrTimeout):
//		// payments did not answer in 30 s
//	}
//
// Submit returns a future instead of waiting; Group keeps one executor per
// named dependency.
//
// # Stuck or busy
//
// A full bulkhead is not always a sick supplier: a burst of arrivals, a
// cold start, or a supplier that pauses for half a second fill it too,
// with calls that will end in a moment. A call that finds the bulkhead
// full of such young calls is refused alone (ErrSaturated, counted as
// RejectedBusy in Stats.Rejected, reported to Config.OnBusy), and the
// breaker stays closed. Only a stuck bulkhead trips it: half of its slots
// held by calls older than 8 × the p99 of the supplier's recent successful
// calls (Stats.LatencyP99), at least 0.5 s and at most half the invocation
// timeout (the ceiling is also the threshold of a supplier without
// history). StuckConfig tunes this and gives back the literal rule (trip
// on any saturation). In the shop outage of the loadtest module (10
// payments/s answered in 100 ms, 10 slots, 30 s timeout) the breaker opens
// 1.3 s into the outage; at 50 payments/s, 0.9 s; a healthy supplier under
// Poisson bursts with 0.5–0.7 s stalls every 30 s never trips in 10
// minutes, where the literal rule trips 53 times.
//
// # Sizing a bulkhead
//
// Little's law gives the slots a supplier keeps busy on average: arrival
// rate × mean latency (80 calls/s × 62 ms = 5 slots). Give it at least
// twice that at the peak rate, so that Poisson bursts rarely fill it: with
// 10 slots the loadtest's bursty supplier refuses 1.8 % of its calls as
// busy without stalls, 3.4 % with them. To ride out a stall of the
// supplier without refusals it takes rate × stall more (80/s × 0.6 s = 48
// slots: 0.13 % refused); with fewer, the calls that arrive during a stall
// are refused as busy, which is cheap, visible and trips nothing. The
// stuck rule needs half the slots to be old, so one call from the far tail
// of the latency never trips it, and a hang is caught once half the slots
// have filled and aged: about (slots / 2) / rate + 8 × p99 after it
// starts. A small queue (a few slots' worth, a queue timeout of a few
// p99) turns the refusals of short bursts into short waits; its oldest
// call's wait counts as an age like a running call's. A bulkhead whose
// RejectedBusy count grows steadily is too small for its traffic.
//
// # Changing a running executor
//
// Group.Reconfigure (and Executor.Reconfigure) put a new configuration in
// force on running executors, validated whole first: sizes, queues,
// timeouts, the stuck criterion and breaker rules change without dropping a
// call in flight or losing a breaker's state. A smaller bulkhead lets its
// running calls finish; new calls see the new size at once.
//
// # Call durations
//
// Executor.CallDurations returns cumulative histograms of the durations of
// the calls that ran, by outcome, in the fixed buckets of DurationBuckets;
// the metrics and fuseotel modules export them.
//
// Nothing runs at import and nothing runs in the background of an idle
// executor. Goroutines exist only while calls are in flight (each call's
// own, one deadline timer per executor, and, for each call that times
// out, a short-lived goroutine that records its timeout), so executors
// also work inside testing/synctest bubbles.
//
// User code runs on these goroutines: fn on the call's goroutine;
// breaker.Config.Classify and the ErrorKinds' Match functions there when fn
// returns, or, when the call times out, on the goroutine that records that
// call's timeout (one per timed-out call, so a classifier that blocks
// delays only its own call's future); transition listeners on whichever of
// the submitter, the call or its timeout caused the transition. A panic in
// any of them is recovered: fn's or a classifier's resolves the call's
// future with a *PanicError naming it (a failure on the breaker), a
// listener's is logged. A callback that ends its goroutine with
// runtime.Goexit (t.FailNow in a test's classifier or listener) instead of
// returning is treated as one that panicked. Close returns by its
// context's deadline whatever that code is doing.
package executor
