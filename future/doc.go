// Package future provides [Future], a value that is completed exactly once
// and awaited with a context, and [Promise], the side that completes it.
//
// # A short story
//
// A checkout page needs the shipping quote from a slow supplier. The handler
// starts the call and keeps working; the call's result arrives as a future:
//
//	p := future.NewPromise[Quote]()
//	go func() { p.Complete(shipping.Quote(callCtx, cart)) }()
//	quote := p.Future() // hand this to whoever needs the answer
//
//	// ... render the rest of the page ...
//
//	q, err := quote.Await(reqCtx) // the value, or reqCtx.Err() if the request ends first
//
// Awaiting with reqCtx bounds only the wait. If the visitor gives up, Await
// returns at once, while the supplier call runs on until callCtx ends and
// still completes the future; another Await, or nobody, may pick the result
// up. Futures never cancel work. Whoever starts the work owns its context,
// and to stop work early that owner cancels it (see the example of [All]).
//
// In fusebox, the executor is that owner: Submit runs the call on a bulkhead
// slot under the invocation timeout and returns the future.
//
// # Fan-out
//
// [All] waits for every future and returns on the first failure, [Any]
// returns the first success, and [First] the first result of either kind.
// They block the calling goroutine only and start no goroutines of their
// own: each pending future notifies the helper directly when it completes.
//
// # Cost
//
// A future costs one allocation: its [Promise], or a struct that embeds a
// zero Promise by value, or [Ready] and [Failed]. Awaiting a future that is
// already complete is one atomic load, with no channel and no lock. A done
// channel is made only when someone must block: [Future.Done] or [Future.Await]
// on a pending future; that is the only second allocation. [Promise.Complete]
// takes no lock unless a fan-out helper is watching, and never blocks.
//
// # Zero values
//
// The zero [Promise] is pending and ready to use, so a producer can embed it
// by value and spend no allocation on the future. The zero [Future], one that
// no Promise holds, is a valid future that never completes: Await on it
// returns only when its context ends, and Done returns a channel that never
// closes.
//
// # Concurrency
//
// All methods and functions are safe for concurrent use. Futures and
// promises are used by pointer and must not be copied; go vet reports
// copies. Completion is decided by one compare-and-swap, so exactly one
// [Promise.Complete] wins and every awaiter sees its value and error.
//
// Nothing in this package starts a goroutine or a timer, so futures work
// inside testing/synctest bubbles: Await blocked on a pending future or
// a context deadline is durably blocked, and fake time moves on.
//
// # Memory ordering
//
// A future's state word moves pending → completing → done. The winner of
// the compare-and-swap into completing is the only writer of the value and
// error; it writes them and then sets done atomically. A reader that
// observes done (an atomic load, the closed done channel, or a helper's
// notice sent after done was set) therefore observes the writes, in the
// sense of the Go memory model's "synchronized before". The done channel
// and the helpers' waiters are registered under a mutex, each announced by
// a compare-and-swap that sets a bit in the state word and fails once done
// is set; the atomic step that sets done returns those bits, so the
// completer knows whether to close the channel and whether it must take
// the mutex to notify waiters. Nobody can register after that step.
//
// # Errors
//
// The package's own errors are [ErrPending] and [ErrNoFutures]. Otherwise,
// Await returns the producer's error unchanged, so match it with errors.Is,
// or the context's error (ctx.Err(), not its cause).
package future
