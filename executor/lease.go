package executor

import (
	"context"
	"errors"
	"sync/atomic"
	"unsafe"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/priority"
)

// A Lease holds one slot of an executor for work its holder does on its own
// goroutine: an HTTP exchange whose response body is read after RoundTrip
// has returned, a stream. It is Submit without a goroutine: the same
// breaker, bulkhead, queue and invocation deadline, and the same accounting,
// but the holder runs the work and ends it with Done.
//
// The lease's context (Context) ends at the invocation deadline; the
// timeout is recorded on the breaker at that moment, as for a call, and the
// slot stays held until Done, so that in-flight work never exceeds the
// bulkhead. A holder must call Done exactly once, however the work ends;
// later calls do nothing.
type Lease struct {
	// c is the lease's call, its first field: the call and its Lease are
	// one allocation (newLeaseCall), and leaseOf finds one from the other.
	c    call[struct{}]
	done atomic.Bool
}

// newLeaseCall makes a lease's call inside a new Lease. Only a lease has
// no function, and a lease's T is always struct{}.
func newLeaseCall[T any]() *call[T] {
	l := new(Lease)
	return any(&l.c).(*call[T])
}

// leaseOf returns the Lease a lease's call is the first field of.
func leaseOf(c *call[struct{}]) *Lease {
	return (*Lease)(unsafe.Pointer(c)) // made by newLeaseCall: c is at the Lease's address
}

// Lease takes a slot for work the caller does itself, or returns a
// *RejectedError (breaker.ErrOpen, ErrSaturated, ErrClosed) without taking
// one. With a queue it waits, like a submitted call, for a slot: until the
// queue timeout (ErrQueueTimeout), ctx's end (ctx's error) or Close
// (ErrClosed).
func (ex *Executor) Lease(ctx context.Context) (*Lease, error) {
	c, err := admit[struct{}](ctx, ex, nil)
	if err != nil {
		if p := priority.From(ctx); p != priority.Default {
			countRefused(ex, p, err) // by priority (priority.go)
		}
		return nil, err
	}
	if c.q != nil {
		select {
		case <-c.q.granted:
		case <-c.promise.Future().Done():
			// It left the queue without a slot.
			_, err := c.promise.Future().Await(context.Background())
			return nil, err
		}
	}
	if !c.state.CompareAndSwap(stRunning, stInvoking) {
		// Its deadline passed before it was handed over (expire recorded
		// that as ignored), or start ended it at once because the caller
		// had given up: either way, nothing was done.
		if c.state.Load() == stExpired {
			c.settle(struct{}{}, ErrTimeout, skipped)
		}
		_, err := c.promise.Future().Await(context.Background())
		if err == nil {
			err = errors.New("executor: the lease ended before it began") // not reached
		}
		return nil, err
	}
	return leaseOf(c), nil
}

// LeaseIn is Lease on the executor of the supplier name in g; like
// SubmitIn, it cannot lose a race with idle eviction.
func LeaseIn(ctx context.Context, g *Group, name string) (*Lease, error) {
	for {
		ex, err := g.Executor(name)
		if err != nil {
			return nil, err
		}
		l, err := ex.Lease(ctx)
		if err != nil && ex.evicted.Load() && errors.Is(err, ErrClosed) {
			continue
		}
		return l, err
	}
}

// Context returns the lease's context: the caller's context (its values and
// cancellation) with the invocation deadline, counted from the moment the
// lease began. It ends at that deadline, when the caller's context ends,
// when the executor is closed under it, or at Done. A nil or zero Lease
// (one that Lease refused) holds no slot: its context has ended, its cause
// an error that says so, so that work started under it by mistake stops at
// once instead of running unprotected.
func (l *Lease) Context() context.Context {
	if l == nil || l.c.ctx.ex == nil {
		return noLeaseCtx
	}
	return &l.c.ctx
}

// errNoLease is the cause of the context of a nil or zero Lease.
var errNoLease = errors.New("executor: the context of a nil or zero Lease (Lease returned an error)")

// noLeaseCtx is the context of every nil or zero Lease: ended, with cause
// errNoLease.
var noLeaseCtx = func() context.Context {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errNoLease)
	return ctx
}()

// Done gives the slot back and records the outcome on the breaker, as a
// call that returned err would: nil is a success, other errors are
// classified by the breaker's Classify, and an error after the caller
// cancelled is ignored. A *breaker.PanicError (the holder recovered a panic
// of the work) counts as a panic and a failure, like a panic of a submitted
// function. After the deadline the timeout has been recorded already, and
// Done only gives the slot back. Only the first Done counts. A nil or zero
// Lease holds no slot, and its Done does nothing.
func (l *Lease) Done(err error) {
	if l == nil || l.c.ctx.ex == nil || l.done.Swap(true) {
		return
	}
	end := ran
	if _, ok := err.(*breaker.PanicError); ok {
		end = panicked
	}
	l.c.settle(struct{}{}, err, end)
}

// Skip ends the lease as work that says nothing of the supplier (the
// dial of a connection, a connection check): the slot is given back, the
// breaker records the permit as ignored whatever Classify would say (a
// half-open probe's place passes on), and the latency history takes no
// sample (Stats.Durations counts it as ignored). Only the first Skip,
// Finish or Done counts.
func (l *Lease) Skip() {
	if l == nil || l.c.ctx.ex == nil || l.done.Swap(true) {
		return
	}
	l.c.settle(struct{}{}, nil, unjudged)
}

// Finish ends the lease with the outcome of work that returned err, as
// classify judges it (nil: err as it is), and returns the verdict it
// recorded. classify runs under breaker.Guard, named callback: a panic there is
// recorded as a failure, its *breaker.PanicError the verdict, and a
// Goexit ends the lease the same way before the goroutine ends. Finish is
// Done once a verdict is known: only the first Finish or Done counts.
func (l *Lease) Finish(err error, classify func(error) error, callback string) error {
	verdict := err
	if classify != nil {
		v, perr := breaker.Guard(callback, func() (error, error) { return classify(err), nil }, l.Done)
		if verdict = v; perr != nil {
			verdict = perr
		}
	}
	l.Done(verdict)
	return verdict
}
