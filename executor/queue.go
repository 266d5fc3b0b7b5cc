package executor

// The queue: a call that finds every slot taken waits for one in the
// bulkhead's queue, bounded by the queue timeout, until a call that ends
// hands it its slot (release, promote), or gives up (dequeue, abandon).

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/fusebox-go/fusebox/bulkhead"
	"github.com/fusebox-go/fusebox/internal/stuck"
	"github.com/fusebox-go/fusebox/internal/timeline"
)

// enqueue puts a call that found every slot in use in the queue qt, or
// starts it if a slot was freed meanwhile. It reports false if the queue
// was full.
func (c *call[T]) enqueue(qt *timeline.Lazy) bool {
	ex, ctx := c.ctx.ex, c.ctx.Parent
	q := &queueState{}
	q.waiter.Value = c
	q.node.Owner, q.node.Kind = c, queueDeadline
	if c.fn == nil {
		q.granted = make(chan struct{}) // a lease waits for its slot
	}
	c.q = q
	// The mutex is held until the call is fully queued, so that a Release
	// handing it a slot (promote), its queue deadline or its caller's
	// cancellation (dequeue) all find it set up.
	q.mu.Lock()
	switch ex.bh.Admit(&q.waiter) {
	case bulkhead.Queued:
		c.state.Store(stQueued)
		q.since = ex.now()
		q.node.At = stuck.AddSat(q.since, time.Duration(ex.queueTO.Load()))
		listed := qt.Add(&q.node, &ex.env.epoch)
		if listed && ctx.Done() != nil {
			q.unwatch = context.AfterFunc(ctx, func() { c.dequeue(ctx.Err()) })
		}
		q.mu.Unlock()
		if !listed { // Close has already emptied the queue: leave it too
			c.dequeue(ErrClosed)
		}
	case bulkhead.Acquired:
		q.mu.Unlock()
		c.q = nil
		c.start()
	default:
		q.mu.Unlock()
		return false
	}
	return true
}

type promoter interface{ promote() }

// queueFull reports whether every queue place is taken; without a queue
// it always is.
func (ex *Executor) queueFull() bool {
	s := ex.bh.Stats()
	return s.Queued >= s.QueueCap
}

// resize sizes the bulkhead and returns the queued calls it handed the
// slots it added, to be started as after a release. The sizes come from
// resolve, which checked them as the bulkhead does.
func (ex *Executor) resize(slots, queue, lowWater int) []*bulkhead.Waiter {
	handed, err := ex.bh.Resize(bulkhead.Config{Slots: slots, Queue: queue, LowWater: lowWater})
	if err != nil {
		panic("executor: a size resolve let through: " + err.Error())
	}
	return handed
}

// queueState is what a call needs while it waits in the queue.
type queueState struct {
	mu      sync.Mutex
	waiter  bulkhead.Waiter
	node    timeline.Deadline // in ex.queued while it waits
	since   int64             // when it was queued (executor clock), for the stuck criterion
	unwatch func() bool
	granted chan struct{} // a lease's: closed when it has a slot
}

// abandon is Close giving up on a running call: its future resolves with
// ErrClosed; fn runs on until it returns and then gives its slot back.
func (c *call[T]) abandon() {
	x := c.ctx.State()
	c.ctx.ex.counts().overdue.Add(c.overdueUnit())
	if !c.state.CompareAndSwap(stInvoking, stExpired) && !c.state.CompareAndSwap(stRunning, stExpired) {
		c.ctx.ex.counts().overdue.Add(-c.overdueUnit())
		return // it has just returned, or its deadline came first: that side resolves it
	}
	x.Expiry.Err = ErrClosed // only the side that won the CAS writes it (see expire)
	c.permit.Ignore()
	c.ctx.Cancel(context.Canceled)
	x.Expiry.Meet.Add(1)
	c.resolveTimedOut()
}

// promote starts a queued call that a Release handed a slot.
func (c *call[T]) promote() {
	q := c.q
	q.mu.Lock() // wait until Submit has finished queueing it
	q.node.Finish()
	unwatch := q.unwatch
	q.mu.Unlock()
	if unwatch != nil {
		unwatch()
	}
	c.start()
}

// dequeue takes a waiting call out of the queue: its queue deadline passed
// (ErrQueueTimeout), its caller cancelled (ctx's error) or the executor
// closed (ErrClosed). The call never runs. If a Release handed it a slot
// first, dequeue does nothing: the call runs.
func (c *call[T]) dequeue(err error) {
	ex, qs := c.ctx.ex, c.q
	if !ex.bh.Cancel(&qs.waiter) {
		return
	}
	qs.mu.Lock()
	c.state.Store(stLeft)
	qs.node.Finish()
	unwatch := qs.unwatch
	qs.mu.Unlock()
	if unwatch != nil {
		unwatch()
	}
	ex.counts().unserved.Add(1)
	// A transition listener that ends this goroutine (runtime.Goexit)
	// while the permit is given back: resolve the call all the same.
	finished := false
	defer func() {
		if !finished {
			c.callbackExited()
		}
	}()
	switch {
	case errors.Is(err, context.Canceled):
		ex.callerCancelled(c.permit)
	case errors.Is(err, context.DeadlineExceeded):
		// Our queue wait bound (ErrQueueTimeout matches too) or the
		// caller's deadline: either way the call waited too long for a slot.
		ex.counts().queueTimeouts.Add(1)
		c.permit.Ignore()
		if errors.Is(err, ErrQueueTimeout) && ex.counts().shadow.Load() {
			// Shadow mode refuses nothing: a call that waited out the queue
			// timeout runs all the same, outside the bulkhead, still counted
			// among the calls Close waits for.
			finished = true
			c.runShadowed()
			return
		}
	default: // ErrClosed
		c.permit.Ignore()
	}
	finished = true
	var zero T
	c.promise.Complete(zero, err)
	ex.leave()
}
