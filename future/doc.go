// Package future provides [Future], a value that is completed exactly once
// and awaited with a context, and [Promise], the side that completes it.
//
// # A short story
//
// A checkout page needs the shipping quote from a slow supplier. The handler
// starts the call and keeps working; the call's result arrives as a future:
//
//	p := new(future.Promise[Quote])
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
// A future costs one allocation, and awaiting a complete one is one atomic
// load. The zero [Promise] is pending and ready to use, so a producer can
// embed it by value; the zero [Future] never completes. All methods and
// functions are safe for concurrent use; nothing in this package starts a
// goroutine or a timer, so futures work inside testing/synctest bubbles.
// docs/design.md in the repository explains the memory ordering.
//
// # Errors
//
// The package's own error is [ErrNoFutures]. Otherwise, Await returns the
// producer's error unchanged, so match it with errors.Is, or the context's
// error (ctx.Err(), not its cause).
package future
