package bulkhead

// A Task is work that a [Runner] starts; the executor's calls are Tasks.
// Run must not panic: the executor recovers inside Run.
type Task interface {
	Run()
}

// A Runner starts Tasks on goroutines it manages. By default fusebox starts
// each admitted call with a go statement of its own: the runtime already
// caches goroutines and sizes their stacks, and the bulkheads bound the
// concurrency of every supplier, so no pool is needed. A Runner is for a
// program that already runs a goroutine pool (an ants pool, say: see the
// antspool module) and wants fusebox's calls under that pool's
// process-wide cap.
//
// Go must not block waiting for a goroutine and must not run t on the
// caller's goroutine. An error means t will not run; the executor then ends
// the call with that error, as ignored by its breaker (the supplier was
// never asked). A panic in Go counts as a refusal, the executor ends the
// call with a *PanicError; so Go must not panic after starting t. Go must
// be safe for concurrent use.
type Runner interface {
	Go(t Task) error
}
