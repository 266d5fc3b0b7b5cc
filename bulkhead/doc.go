// Package bulkhead gives a supplier its own bounded set of slots, with an
// optional bounded FIFO queue, so that a supplier that hangs can hold only
// its own slots and never every worker of the program.
//
// A [Bulkhead] only accounts: it starts nothing and runs nothing. When every
// slot is busy, [Bulkhead.TryAcquire] returns false at that very moment;
// that refusal is the saturation signal from which the executor decides
// whether to open the supplier's circuit breaker (when the slots are held
// by stuck calls) or to refuse only that call (when they are busy with
// young ones). [Bulkhead.Acquire] is the blocking form, in
// the style of golang.org/x/sync/semaphore, that waits for a place in the
// queue to be handed a slot.
//
//	b, _ := bulkhead.New(bulkhead.Config{Slots: 10})
//	if !b.TryAcquire() {
//		return errSaturated // the supplier is saturated now
//	}
//	defer b.Release()
//	return pay(ctx)
//
// [Bulkhead.Admit] is the non-blocking form every executor call goes
// through: it takes a slot, or queues a [Waiter] that the caller embeds in
// its own work, so a queued call costs no goroutine and no allocation;
// [Bulkhead.Release] hands a freed slot straight to the oldest waiter and
// returns it for the releaser to start, and [Bulkhead.Cancel] takes a
// waiter out. Acquire is built on the same queue.
//
// An idle Bulkhead is about 50 bytes and no goroutine; TryAcquire, Release
// and refusals are single compare-and-swap loops while nobody waits. All
// methods are safe for concurrent use. docs/design.md in the repository
// explains the accounting.
package bulkhead
