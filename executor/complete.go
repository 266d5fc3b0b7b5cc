package executor

// Completion: when fn returns, the slot is released first, then the
// outcome is recorded on the breaker with the call's permit, then the
// future resolves (settle, record).

import (
	"context"
	"errors"
	"math"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/internal/adaptive"
)

// settle ends a call whose function has returned (or that never ran):
// its context first, then slot, outcome and future (settleEnded).
// Listed until now: the invocation deadline, or the grace period after it
// (expired, see expire); or never, for a call that never ran. Ending the
// context marks the entry done too, one atomic store: the timeline drops
// it lazily.
func (c *call[T]) settle(v T, err error, end callEnd) {
	c.ctx.Finish()
	c.settleEnded(v, err, end)
}

// settleEnded is settle once the call's context has ended: slot first,
// outcome second, future last.
func (c *call[T]) settleEnded(v T, err error, end callEnd) {
	ex := c.ctx.ex
	won := c.state.CompareAndSwap(stInvoking, stDone) || c.state.CompareAndSwap(stRunning, stDone)
	// The release may start a queued call, on a Runner (user code), and
	// the outcome runs user code (Classify, Match, transition listeners).
	// One that ends the goroutine (runtime.Goexit) instead of returning
	// must not leave the call unresolved: this deferred call resolves it,
	// as if the callback had panicked (and gives its permit back if it was
	// not recorded yet).
	finished, recording := false, false
	defer func() {
		switch {
		case finished:
		case !won:
			c.settleLate(end)
		default:
			if !recording {
				c.permit.Ignore()
			}
			c.callbackExited()
		}
	}()
	if !c.outside() {
		ex.release()
	}
	if !won {
		finished = true
		c.settleLate(end)
		return
	}
	recording = true
	v, err = c.record(v, err, end)
	finished = true
	c.promise.Complete(v, err)
	ex.leave()
}

// settleLate ends a call whose deadline came first. The function has now
// returned and its slot is free; once expire has recorded the timeout too,
// the future resolves (unless the grace period already did).
func (c *call[T]) settleLate(end callEnd) {
	ex := c.ctx.ex
	ex.counts().overdue.Add(-c.overdueUnit())
	if end == panicked {
		ex.counts().panics.Add(1) // the timeout was its failure already
	}
	// Made before the CAS that settle lost: see expire.
	x := c.ctx.Made()
	x.Expiry.Grace.Finish() // the function has returned: no need to wait for it
	if x.Expiry.Meet.Add(1) == 2 {
		c.resolveTimedOut()
	}
	ex.leave()
}

// record records the end of a call that beat its deadline on the breaker,
// in the counts and in the duration histograms, and returns the result its
// future resolves with.
func (c *call[T]) record(v T, err error, end callEnd) (T, error) {
	ex := c.ctx.ex
	var zero T
	var now int64 // when fn returned, for the duration of a call that ran
	if end != skipped {
		now = ex.now()
	}
	switch {
	case end == skipped:
		c.permit.Ignore()
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			ex.counts().cancelled.Add(1)
		}
	case end == unjudged:
		c.permit.Ignore() // whatever Classify would say
		c.ranFor(breaker.Ignored, now)
	case end == panicked:
		// A panic is a bug in fn: a failure whatever the classifier would
		// say of its value (panic(context.Canceled) included) and whether
		// or not the caller had given up.
		ex.counts().panics.Add(1)
		_ = c.permit.Record(breaker.Failure, err) // a Match that panics too: the call's panic is the error to report
		c.ranFor(breaker.Failure, now)
	case err != nil && errors.Is(c.ctx.Parent.Err(), context.Canceled):
		ex.callerCancelled(c.permit)
		c.ranFor(breaker.Ignored, now)
	case err != nil && now >= c.ctx.Node.At:
		// The function noticed its deadline (or its caller's) and returned
		// before the timer got to it: the same timeout, reported the same
		// way whichever side of the race won.
		ex.counts().timeouts.Add(1)
		v, err = zero, ex.timeoutErr(c.ctx.Parent, c.ctx.Node.At)
		o, perr := ex.count(c.permit, ErrTimeout)
		if perr != nil {
			err = perr
		}
		c.ranFor(o, now)
	default:
		o, perr := ex.count(c.permit, err)
		if perr != nil {
			v, err = zero, perr
		}
		if d, n := c.ranFor(o, now); o == breaker.Success {
			ex.observe(d, n, now < c.ctx.Node.At, c.permit)
			if a := ex.adapt.Load(); a != nil && n%adaptive.Every == 0 {
				a.observe(ex, d, now, now < c.ctx.Node.At)
			}
			ex.closeIfDrained()
		}
	}
	return v, err
}

// closeIfDrained is the queue's hysteresis, after a success: a breaker
// opened on a full queue closes, with no probe, once successful calls have
// drained the queue to its low-water mark. Calls that timed out (in the
// queue or running) never count as draining, so a dead or far too slow
// supplier keeps it open until its reset timeout and a probe.
func (ex *Executor) closeIfDrained() {
	if ex.queued.Load() != nil && ex.br.State() == breaker.Open && ex.drainedByService() {
		ex.br.Drained()
	}
}

// callbackExited resolves a call whose breaker callback ended the
// goroutine settling it (runtime.Goexit), with a *breaker.PanicError; the
// call counts as a panic.
func (c *call[T]) callbackExited() {
	ex := c.ctx.ex
	ex.counts().panics.Add(1)
	var zero T
	c.promise.Complete(zero, goexitError())
	ex.leave()
}

// ranFor counts a call that ran, with outcome o, in the duration
// histograms, as having ended at now, and returns its duration and how
// many calls its bucket has counted; -1 and 0 when its start is not known
// (see startedAt).
func (c *call[T]) ranFor(o breaker.Outcome, now int64) (d int64, n uint64) {
	ex := c.ctx.ex
	started := c.startedAt()
	if started == math.MaxInt64 {
		if o == breaker.Success {
			ex.counts().untimed.Add(1)
		}
		return -1, 0
	}
	d = now - started
	return d, ex.recordDuration(o, d)
}

func (ex *Executor) callerCancelled(p breaker.Permit) {
	p.Ignore()
	ex.counts().cancelled.Add(1)
}
