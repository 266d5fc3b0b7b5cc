// Package executor protects calls to one supplier: a circuit breaker, a
// bulkhead of slots, an invocation timeout and futures. When a supplier
// hangs, its calls fill the bulkhead; once they are stuck (see StuckConfig)
// the call that finds no slot trips the breaker, and later calls fail fast
// with breaker.ErrOpen while the rest of the service keeps its workers.
//
//	ex, err := executor.New("payments", executor.Config{Slots: 10, InvocationTimeout: 30 * time.Second})
//	receipt, err := executor.Do(ctx, ex, func(ctx context.Context) (Receipt, error) {
//		return payments.Charge(ctx, order)
//	})
//
// Submit returns a future instead, Lease holds a slot for work on the
// caller's goroutine, and Group keeps one executor per supplier. Nothing
// runs at import and an idle executor holds no goroutine; docs/design.md
// describes the mechanisms.
package executor
