package executor

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/internal/timeline"
)

// A Lease holds one slot for work its holder does on its own goroutine:
// Submit without a goroutine. Its context ends at the invocation deadline;
// the slot stays held until Done, which the holder must call once.
type Lease struct {
	c    call[struct{}] // the call and its Lease are one allocation (newLeaseCall)
	done atomic.Bool
}

// leaseOwner is a Lease as the timeline's Owner of its invocation
// deadline, which the call's record already holds: leaseOf finds the
// Lease from its call through it.
type leaseOwner Lease

func (o *leaseOwner) Expired(k timeline.Kind)     { o.c.Expired(k) }
func (o *leaseOwner) Closed(k timeline.Kind)      { o.c.Closed(k) }
func (o *leaseOwner) Since(k timeline.Kind) int64 { return o.c.Since(k) }

// newLeaseCall makes a lease's call inside a new Lease. Only a lease has
// no function, and a lease's T is always struct{}.
func newLeaseCall[T any]() *call[T] {
	l := new(Lease)
	l.c.ctx.Node.Owner = (*leaseOwner)(l)
	return any(&l.c).(*call[T])
}

// leaseOf returns the Lease a lease's call was made in.
func leaseOf(c *call[struct{}]) *Lease { return (*Lease)(c.ctx.Node.Owner.(*leaseOwner)) }

// Lease takes a slot, waiting in the queue if there is one, or returns a
// *RejectedError without taking one (or ErrQueueTimeout, ctx's error).
func (ex *Executor) Lease(ctx context.Context) (*Lease, error) {
	c, err := admit[struct{}](ctx, ex, nil)
	if err != nil {
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
			c.finish(struct{}{}, ErrTimeout, skipped)
		}
		_, err := c.promise.Future().Await(context.Background())
		if err == nil {
			err = errors.New("executor: the lease ended before it began") // not reached
		}
		return nil, err
	}
	return leaseOf(c), nil
}

// LeaseIn is Lease on the executor of the supplier name in g.
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

// Context returns the lease's context: the caller's, with the invocation
// deadline counted from the lease's start; it also ends at Done or Close.
// A nil or zero Lease's context has ended, with a cause that says so.
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

// Done gives the slot back and records err on the breaker as a call that
// returned err would. Only the first Done counts; a nil Lease's is a no-op.
func (l *Lease) Done(err error) {
	if l == nil || l.c.ctx.ex == nil || l.done.Swap(true) {
		return
	}
	end := ran
	if _, ok := err.(*breaker.PanicError); ok {
		end = panicked
	}
	l.c.finish(struct{}{}, err, end)
}

// Skip ends the lease as work that says nothing of the supplier (a dial):
// the permit is ignored whatever Classify says; no latency sample.
func (l *Lease) Skip() {
	if l == nil || l.c.ctx.ex == nil || l.done.Swap(true) {
		return
	}
	l.c.finish(struct{}{}, nil, unjudged)
}

// Finish ends the lease with classify(err) (nil classify: err), run under
// breaker.Guard named callback, and returns the verdict it recorded.
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
