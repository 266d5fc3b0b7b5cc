package executor

// Timeouts: a call still running at its deadline is recorded on the
// breaker as a timeout and its future resolves with ErrTimeout, while its
// slot stays held until fn returns (expire, expired).

import (
	"context"
	"errors"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/internal/timeline"
)

// The kinds of a call's deadlines, so that the timeline tells it which one
// passed.
const (
	invocationDeadline timeline.Kind = iota // the call runs past its timeout
	graceDeadline                           // a timed-out call's future stops waiting for fn
	queueDeadline                           // a queued call has waited long enough
	outsideDeadline                         // a call run outside the bulkhead in shadow mode runs past its timeout
)

// timeoutGrace is how long a timed-out call's future waits for its
// function to return before it resolves anyway (at most a tenth of the
// invocation timeout). A function that honours its context returns within
// microseconds of its deadline; letting it give its slot back first means a
// caller who sees ErrTimeout and submits again at once does not find its
// own, just-abandoned slot still held, which would trip the breaker on
// saturation after a single timeout. A function that ignores its context
// keeps its slot (honest accounting) and its caller waits only this long.
const timeoutGrace = 5 * time.Millisecond

func (ex *Executor) grace() int64 { return min(int64(timeoutGrace), ex.timeout.Load()/10) }

// expire is the invocation deadline passing while fn still runs. The
// timeout is recorded on the breaker before the future resolves, so a
// caller who sees its fifth timeout and submits again meets an open
// breaker. The call's context ends now; its future resolves when the
// function returns or after the grace period, whichever is first.
func (c *call[T]) expire() {
	ex := c.ctx.ex
	x := c.ctx.State()
	perr := c.ctx.Parent.Err()
	cancelled := errors.Is(perr, context.Canceled)
	if !cancelled {
		perr = ex.timeoutErr(c.ctx.Parent, c.ctx.Node.At)
	}
	// The state is made before the CAS, and read by finish only after its
	// own CAS failed, that is after observing this one. overdue is counted
	// before the CAS too, so that finish's decrement can never run first.
	// The error is written only by the side that won the CAS (Close's
	// abandon may have), and read only after Meet says this side is done.
	ex.counts().overdue.Add(c.overdueUnit())
	called := c.state.CompareAndSwap(stInvoking, stExpired)
	if !called && !c.state.CompareAndSwap(stRunning, stExpired) {
		ex.counts().overdue.Add(-c.overdueUnit())
		return
	}
	x.Expiry.Err = perr
	// A callback below (Classify, Match, a transition listener) that ends
	// this goroutine (runtime.Goexit) instead of returning: the deferred
	// call ends the call as if it had panicked.
	recorded := false
	defer func() {
		if !recorded {
			ex.counts().panics.Add(1)
			x.Expiry.Err = goexitError()
			c.expired()
		}
	}()
	switch {
	case cancelled:
		ex.callerCancelled(c.permit)
		if called {
			c.ranFor(breaker.Ignored, ex.now())
		}
	case !called:
		// No worker got to the call before its deadline: the supplier was
		// never asked, so the breaker learns nothing from it.
		ex.counts().timeouts.Add(1)
		c.permit.Ignore()
	default:
		ex.counts().timeouts.Add(1)
		o, perr := ex.count(c.ctx.Parent, c.permit, ErrTimeout)
		c.ranFor(o, ex.now())
		if perr != nil {
			// A classifier that panicked on the timer goroutine: the call
			// resolves with the panic instead of the timeout. finish reads
			// terr only after meet says this side is done.
			x.Expiry.Err = perr
		}
	}
	recorded = true
	c.expired()
}

// expired ends the context of a call whose deadline came first, its
// outcome recorded, and resolves its future or lists its grace period.
func (c *call[T]) expired() {
	ex, x := c.ctx.ex, c.ctx.Made()
	c.ctx.Cancel(context.DeadlineExceeded)
	// The future resolves when both have happened: the timeout is recorded
	// (here) and the function has returned (finish), or when the grace
	// period is over.
	if x.Expiry.Meet.Add(1) == 2 {
		c.resolveTimedOut()
		return
	}
	x.Expiry.Grace.Owner, x.Expiry.Grace.Kind, x.Expiry.Grace.Inline = c, graceDeadline, true
	x.Expiry.Grace.At = ex.now() + ex.grace()
	if !ex.run.Add(&x.Expiry.Grace, &ex.env.epoch) {
		c.resolveTimedOut()
	}
}

// resolveTimedOut resolves the future of a call whose deadline came first,
// once its function has returned or its grace period is over.
func (c *call[T]) resolveTimedOut() {
	var zero T
	c.promise.Complete(zero, c.ctx.Made().Expiry.Err)
}

// Expired is the timer telling the call that one of its deadlines
// passed while the entry was live.
func (c *call[T]) Expired(k timeline.Kind) {
	switch k {
	case invocationDeadline, outsideDeadline:
		c.expire()
	case graceDeadline:
		c.resolveTimedOut()
	case queueDeadline:
		c.dequeue(ErrQueueTimeout)
	}
}

// Closed is Close giving up on an entry still listed.
func (c *call[T]) Closed(k timeline.Kind) {
	switch k {
	case invocationDeadline, outsideDeadline:
		c.abandon()
	case graceDeadline:
		c.resolveTimedOut()
	case queueDeadline:
		c.dequeue(ErrClosed)
	}
}

// finishLate ends a call whose deadline came first. The function has now
// returned and its slot is free; once expire has recorded the timeout too,
// the future resolves (unless the grace period already did).
func (c *call[T]) finishLate(end callEnd) {
	ex := c.ctx.ex
	ex.counts().overdue.Add(-c.overdueUnit())
	if end == panicked {
		ex.counts().panics.Add(1) // the timeout was its failure already
	}
	// Made before the CAS that finish lost: see expire.
	x := c.ctx.Made()
	x.Expiry.Grace.Finish() // the function has returned: no need to wait for it
	if x.Expiry.Meet.Add(1) == 2 {
		c.resolveTimedOut()
	}
	ex.leave()
}
