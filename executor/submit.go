package executor

import (
	"context"
	"errors"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/bulkhead"
	"github.com/fusebox-go/fusebox/future"
	"github.com/fusebox-go/fusebox/priority"
)

// Submit runs fn on a goroutine of its own, its context ending at the
// invocation deadline, and returns its future, or a *RejectedError without
// calling fn. The future resolves with fn's result, ErrTimeout at the
// deadline (fn keeps its slot until it returns), or a *breaker.PanicError.
func Submit[T any](ctx context.Context, ex *Executor, fn func(context.Context) (T, error)) (*future.Future[T], error) {
	if fn == nil {
		return nil, errBadCall(ctx, ex)
	}
	c, err := admit(ctx, ex, fn)
	if err != nil {
		if p := priority.From(ctx); p != priority.Default {
			countRefused(ex, p, err) // by priority (priority.go)
		}
		return nil, err
	}
	return c.promise.Future(), nil
}

// admit is the admission shared by Submit and Lease: the breaker, then a
// slot (the call starts) or a queue place (it starts when a Release hands
// it a slot). fn is nil for a lease.
func admit[T any](ctx context.Context, ex *Executor, fn func(context.Context) (T, error)) (*call[T], error) {
	c, err := admitEnforced(ctx, ex, fn)
	if err == errShadowed {
		return runOutside(ctx, ex, fn)
	}
	return c, err
}

// admitEnforced is admit as enforce mode decides it; in shadow mode a
// refusal is errShadowed instead (see reject).
func admitEnforced[T any](ctx context.Context, ex *Executor, fn func(context.Context) (T, error)) (*call[T], error) {
	if ctx == nil || ex.unmade() {
		return nil, errBadCall(ctx, ex)
	}
	if ex.isClosed() {
		return nil, ex.reject(RejectedClosed)
	}
	ex.markUsed()
	permit, err := ex.br.Allow()
	if err != nil {
		return nil, ex.refuseOpen()
	}
	if !permit.Probe() && ex.throttled(ctx) {
		permit.Ignore()
		return nil, ex.reject(RejectedThrottled)
	}
	// A call over its priority's share (priority.go) is refused as busy,
	// and so are most refusals in a burst, which find the bulkhead full of
	// young calls: both before the call is counted in, with no write but
	// the rejection count. A probe, or a bulkhead that may be stuck, takes
	// the full path below, where stuck slots trip the breaker, for a call
	// over its share too: a share must not hide a hang.
	over := ex.overShare(ctx, permit)
	if (over || ex.bh.Saturated() && !permit.Probe()) && !ex.isStuck() {
		return nil, ex.refuseBusy()
	}
	// Count the call in and look for Close in one step: a Close (or an
	// eviction) either came first and we leave, or it waits for this call.
	if ex.active.Add(1)&closedBit != 0 {
		return nil, ex.refuseClosed(permit)
	}
	if over {
		return nil, ex.saturated(permit) // stuck: trips the breaker
	}
	if ex.bh.Admit(nil) == bulkhead.Acquired {
		c := newCall(ctx, ex, fn, permit)
		c.start()
		return c, nil
	}
	qt := ex.queued.Load()
	if qt == nil || ex.queueFull() {
		return nil, ex.saturated(permit)
	}
	c := newCall(ctx, ex, fn, permit)
	if !c.enqueue(qt) {
		return nil, ex.saturated(permit)
	}
	return c, nil
}

// Do submits fn and awaits its result with the same ctx.
func Do[T any](ctx context.Context, ex *Executor, fn func(context.Context) (T, error)) (T, error) {
	f, err := Submit(ctx, ex, fn)
	if err != nil {
		var zero T
		return zero, err
	}
	return f.Await(ctx)
}

func errBadCall(ctx context.Context, ex *Executor) error {
	switch {
	case ctx == nil:
		return errors.New("executor: Submit with a nil context (use context.Background())")
	case ex == nil:
		return errors.New("executor: Submit to a nil *Executor")
	case ex.unmade():
		return errUnmade
	}
	return errors.New("executor: Submit of a nil function")
}

// saturated trips the breaker in the call that found the bulkhead full of
// stuck calls, and refuses only this call if they are young (StuckConfig).
// A half-open probe that found no slot (calls that ignore their context
// still hold them) is deferred instead: the breaker re-opens for a fresh
// reset timeout, and the caller sees breaker.ErrOpen, as everyone else does
// meanwhile.
//
// The transition runs the listeners on the submitter's goroutine: the call
// is counted out (leave) in a deferred call, so that a listener that ends
// the goroutine (runtime.Goexit) leaves no active call behind for Close to
// wait for, and the refusal is counted before.
func (ex *Executor) saturated(p breaker.Permit) error {
	if p.Probe() {
		defer ex.leave()
		err := ex.reject(RejectedOpen)
		p.Reject(breaker.ProbeDeferred)
		return err
	}
	if !ex.isStuck() {
		return ex.busy() // young calls: refuse this one, leave the breaker alone
	}
	r, br := RejectedSaturated, breaker.Saturation
	if ex.bh.Stats().QueueCap > 0 {
		r, br = RejectedQueueFull, breaker.QueueFull
		rc := ex.counts()
		rc.unservedAtTrip.Store(rc.unserved.Load())
	}
	defer ex.leave()
	err := ex.reject(r)
	p.Reject(br)
	return err
}

// drainedByService reports whether a breaker opened on a full queue may
// close now: the queue is at its low-water mark and got there by serving
// calls. A queue that emptied because its calls timed out (a supplier far
// too slow) or were cancelled proves nothing; that breaker waits for its
// reset timeout and a probe.
func (ex *Executor) drainedByService() bool {
	if !ex.bh.Drained() {
		return false
	}
	rc := ex.counts()
	return rc.unserved.Load() == rc.unservedAtTrip.Load()
}

// refuseOpen is the refusal of a call the open breaker rejected. The
// breaker counted the rejection (Stats adds it in), so failing fast is a
// clock read, a few loads and one atomic add; in shadow mode the call runs
// all the same (errShadowed).
func (ex *Executor) refuseOpen() error {
	rc := ex.counts()
	if rc.shadow.Load() {
		return rc.shadowOpen()
	}
	return &rc.errs[RejectedOpen]
}

// markUsed notes that the executor has had a call (a Group's eviction
// reads it), writing the shared word only the first time.
func (ex *Executor) markUsed() {
	if !ex.used.Load() {
		ex.used.Store(true)
	}
}

// refuseClosed refuses a call that met Close (or an eviction) as it came
// in: a refusal, as a busy call's is, counted in Rejected.Closed and not
// as an outcome. Only a half-open probe's place must be given back.
func (ex *Executor) refuseClosed(permit breaker.Permit) error {
	if permit.Probe() {
		permit.Ignore()
	}
	ex.leave()
	return ex.reject(RejectedClosed)
}
