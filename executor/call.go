package executor

// The path of one call, in the order it runs (docs/design.md, "The path
// of one call"): Submit admits it (admit: the breaker, then a slot or a
// queue place), start lists its deadline and hands it to a goroutine, run
// calls fn, and finish ends it: release the slot first, record the
// outcome on the breaker, complete the future. A Lease takes the same
// path without fn: its holder runs the work and Done finishes it.
// Refusals are in refuse.go, the queue in queue.go, deadlines that pass
// first in timeout.go.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/bulkhead"
	"github.com/fusebox-go/fusebox/future"
	"github.com/fusebox-go/fusebox/internal/adaptive"
	"github.com/fusebox-go/fusebox/internal/stuck"
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
		return nil, err
	}
	return c.promise.Future(), nil
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

// admit is the admission shared by Submit and Lease: the breaker, then a
// slot (the call starts) or a queue place (it starts when a Release hands
// it a slot). fn is nil for a lease. A refusal is counted by priority.
func admit[T any](ctx context.Context, ex *Executor, fn func(context.Context) (T, error)) (*call[T], error) {
	c, err := admitEnforced(ctx, ex, fn)
	if err == errShadowed {
		c, err = runOutside(ctx, ex, fn)
	}
	if err != nil {
		if p := priority.From(ctx); p != priority.Default {
			countRefused(ex, p, err) // by priority (priority.go)
		}
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
	var now int64 // the throttle's clock read, which the call's start reuses
	if !permit.Probe() {
		var refused bool
		if refused, now = ex.throttled(ctx); refused {
			permit.Ignore()
			return nil, ex.reject(RejectedThrottled)
		}
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
		c.startAt(now)
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

// Call states. A call moves queued → running → invoking → done or expired
// (running → done or expired when fn is never called), or queued → left;
// every move is a CAS, so exactly one of the function's return, its
// deadline, its caller's cancellation and Close decides it, and a deadline
// that passes before fn was called is told apart from a slow supplier.
const (
	stQueued   = iota + 1
	stRunning  // holds a slot, its goroutine started; fn not called yet
	stInvoking // fn called, before its deadline
	stDone     // fn returned (or was never called) first
	stExpired  // the deadline (or Close) came first; fn may still run
	stLeft     // left the queue without running
)

// call is one protected call: future, deadline and context in one
// allocation. Its size is most of what a call costs: keep it within 192
// bytes for an int result, a size class. What only a call that times out
// or whose context is watched needs lives in its context's ctxState. Its
// executor is c.ctx.ex.
type call[T any] struct {
	promise future.Promise[T]
	fn      func(context.Context) (T, error)
	permit  breaker.Permit
	state   atomic.Uint32
	span    uint32      // from the call's start to its deadline, encoded by stuck.SpanOf (see startedAt)
	ctx     callCtx     // with the call's entry in ex.run, ctx.Node
	q       *queueState // only for a call that had to queue
}

func newCall[T any](ctx context.Context, ex *Executor, fn func(context.Context) (T, error), p breaker.Permit) *call[T] {
	var c *call[T]
	if fn == nil {
		c = newLeaseCall[T]() // inside its Lease, its deadline's Owner
	} else {
		c = new(call[T])
		c.ctx.Node.Owner = c // kind: invocationDeadline, the zero value
	}
	c.fn, c.permit = fn, p
	c.ctx.Parent = ctx
	c.ctx.ex = ex
	return c
}

// start runs a call that holds a slot.
func (c *call[T]) start() { c.startAt(0) }

// startAt is start at now, a clock read made just before it (0: none).
func (c *call[T]) startAt(now int64) {
	ex := c.ctx.ex
	c.state.Store(stRunning)
	if now == 0 {
		now = ex.now()
	}
	at := stuck.AddSat(now, time.Duration(ex.timeout.Load()))
	if d, ok := c.ctx.Parent.Deadline(); ok {
		if pd := int64(d.Sub(ex.env.epoch)); pd < at {
			at = pd // the caller's deadline comes first: time the call out then
		}
	}
	c.span = stuck.SpanOf(at - now) // for startedAt
	c.ctx.Node.At = at
	if perr := c.ctx.Parent.Err(); perr != nil || at <= now {
		// The caller has given up already: don't make the call, and don't
		// let the timer count it as the supplier's timeout.
		if perr == nil {
			perr = context.DeadlineExceeded
		}
		var zero T
		c.finish(zero, perr, skipped)
		return
	}
	if !ex.run.Add(&c.ctx.Node, &ex.env.epoch) {
		// The executor is closing: the call will not run. finish gives the
		// slot back.
		var zero T
		c.finish(zero, ErrClosed, skipped)
		return
	}
	if c.fn == nil {
		// A lease: its holder does the work on its own goroutine. A queued
		// one is waiting to be told.
		if c.q != nil {
			close(c.q.granted)
		}
		return
	}
	if ex.env.runner == nil {
		go c.run()
		return
	}
	if err := runOn(ex.env.runner, c); err != nil {
		// The user's Runner refused it (or panicked): the call will not
		// run. finish gives the slot back, also if the deadline has
		// already fired in between.
		var perr *breaker.PanicError
		if errors.As(err, &perr) {
			ex.counts().panics.Add(1)
		} else {
			err = fmt.Errorf("executor: %s: the Runner refused the call: %w", ex.name, err)
		}
		var zero T
		c.finish(zero, err, skipped)
	}
}

// run is the worker's side: call fn, then finish. A function that ends
// its goroutine with runtime.Goexit is finished too, with an error.
func (c *call[T]) run() {
	returned := false
	defer func() {
		if !returned {
			var zero T
			c.finish(zero, &breaker.PanicError{Callback: "fn", Value: breaker.ErrGoexit, Stack: debug.Stack()}, panicked)
		}
	}()
	var v T
	var err error
	end := skipped
	if perr := c.ctx.Parent.Err(); perr != nil {
		// The caller gave up before the call started: don't make it, and
		// don't blame the supplier for it.
		err = perr
	} else if !c.state.CompareAndSwap(stRunning, stInvoking) {
		// The deadline passed before a worker got to the call (expire has
		// recorded it as ignored): don't make it either.
		err = ErrTimeout
	} else {
		v, end, err = c.invoke()
	}
	returned = true
	// finish's two steps, here one frame shallower: ending a real context
	// must fit a new goroutine's stack (TestACallFitsANewGoroutinesStack).
	c.ctx.Finish()
	c.finishEnded(v, err, end)
}

// callEnd says how a call's function ended, for finish.
type callEnd uint8

const (
	ran      callEnd = iota // fn returned
	skipped                 // fn was never called
	panicked                // fn panicked (err is the *breaker.PanicError)
	unjudged                // a lease's work that says nothing of the supplier (Lease.Skip)
)

func (c *call[T]) invoke() (v T, end callEnd, err error) {
	defer func() {
		if r := recover(); r != nil {
			err, end = newPanicError(r), panicked
		}
	}()
	v, err = c.fn(&c.ctx)
	return v, ran, err
}

// finish ends a call whose function has returned (or that never ran):
// its context first, then slot, outcome and future (finishEnded).
// Listed until now: the invocation deadline, or the grace period after it
// (expired, see expire); or never, for a call that never ran. Ending the
// context marks the entry done too, one atomic store: the timeline drops
// it lazily.
func (c *call[T]) finish(v T, err error, end callEnd) {
	c.ctx.Finish()
	c.finishEnded(v, err, end)
}

// finishEnded is finish once the call's context has ended: slot first,
// outcome second, future last.
func (c *call[T]) finishEnded(v T, err error, end callEnd) {
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
			c.finishLate(end)
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
		c.finishLate(end)
		return
	}
	recording = true
	v, err = c.record(v, err, end)
	finished = true
	c.promise.Complete(v, err)
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
		o, perr := ex.count(c.ctx.Parent, c.permit, ErrTimeout)
		if perr != nil {
			err = perr
		}
		c.ranFor(o, now)
	default:
		o, perr := ex.count(c.ctx.Parent, c.permit, err)
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

// release frees the slot of a call whose function returned, starting the
// oldest queued call if the bulkhead hands the slot over to it.
func (ex *Executor) release() {
	if w := ex.bh.Release(); w != nil {
		w.Value.(promoter).promote()
	}
}

func (ex *Executor) callerCancelled(p breaker.Permit) {
	p.Ignore()
	ex.counts().cancelled.Add(1)
}

// callbackExited resolves a call whose breaker callback ended the
// goroutine finishing it (runtime.Goexit), with a *breaker.PanicError; the
// call counts as a panic.
func (c *call[T]) callbackExited() {
	ex := c.ctx.ex
	ex.counts().panics.Add(1)
	var zero T
	c.promise.Complete(zero, goexitError())
	ex.leave()
}
