// Package bulkhead gives each downstream supplier its own bounded set of
// slots, with an optional bounded FIFO queue. It only accounts: it starts
// nothing and runs nothing.
//
// # The story
//
// A payment service hangs. Without a bulkhead every request that touches it
// holds a request worker until its timeout, and soon no worker is left for
// anything else. With a [Bulkhead] of 10 slots, the eleventh concurrent
// payment call finds no slot: [Bulkhead.TryAcquire] returns false (or
// [Bulkhead.Admit] returns [Full]) at that very moment, which is the signal
// the executor uses to open the supplier's circuit breaker. Nothing polls a
// gauge: saturation is reported by the call that meets it.
//
//	b, _ := bulkhead.New(bulkhead.Config{Slots: 10})
//	if !b.TryAcquire() {
//		return errSaturated // trip the breaker here
//	}
//	defer b.Release()
//	return pay(ctx)
//
// # Queueing without goroutines
//
// With Config.Queue > 0, a caller that finds every slot busy can take a queue
// place instead. The place is a [Waiter] embedded in the caller's own work,
// so a queued call costs neither a goroutine nor an allocation. Whoever
// releases a slot while waiters are queued does not free it: [Bulkhead.Release]
// hands it straight to the oldest waiter and returns that waiter, and the
// releaser starts its work. Newcomers never jump the queue.
//
// Slot ownership, which every user of Admit must follow:
//
//   - Admit returned [Acquired]: the caller holds a slot and must Release it.
//   - Admit returned [Queued]: the Waiter holds nothing yet. Later exactly
//     one of these happens, never both: a Release returns the Waiter (the
//     slot now belongs to its work; the releaser must start that work, and
//     the work must Release the slot when it ends), or [Bulkhead.Cancel]
//     returns true (the Waiter left the queue; its work must never run).
//   - Cancel returned false for a Waiter that was queued: a Release got
//     there first, so the work will be started by that releaser.
//
// An executor built on Admit looks like this (call embeds a Waiter whose
// Value points back at the call, and Run recovers its own panics):
//
//	switch b.Admit(&c.Waiter) {
//	case bulkhead.Full:
//		return errSaturated // the exact moment of saturation
//	case bulkhead.Acquired:
//		go c.Run()
//	case bulkhead.Queued:
//		// nothing runs until a Release hands c a slot
//	}
//
//	func (c *call) Run() {
//		c.result = c.protect()
//		if next := b.Release(); next != nil { // release first...
//			go next.Value.(*call).Run() // ...starting the oldest waiter
//		}
//		c.complete() // ...then tell the caller
//	}
//
// [Bulkhead.Acquire] is the blocking form for direct users, in the style of
// golang.org/x/sync/semaphore; it is built on Admit and Cancel.
//
// The queue level also carries hysteresis for the breaker: a breaker opened
// because the queue was full closes again only once [Bulkhead.Drained] says
// the queue is at or below its low-water mark.
//
// # Running the work
//
// The executor starts each admitted call with a go statement: the runtime
// caches goroutines and sizes their stacks, and the bulkheads already bound
// concurrency per supplier. A program that runs its own goroutine pool can
// plug it in as a [Runner].
//
// # Cost and concurrency
//
// An idle Bulkhead is about 50 bytes and no goroutine. TryAcquire, Release
// and refusals are single CAS loops on one atomic word while nobody waits;
// a small mutex is taken only while waiters are queued. Every method of
// Bulkhead is safe for concurrent use; a Waiter belongs to one queue at a
// time and its fields other than Value belong to the bulkhead.
package bulkhead
