package executor

// The call: its record, its states, and how it starts and runs its
// function on a goroutine of its own (or the Group's Runner).

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/future"
	"github.com/fusebox-go/fusebox/internal/stuck"
)

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
func (c *call[T]) start() {
	ex := c.ctx.ex
	c.state.Store(stRunning)
	now := ex.now()
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
		c.settle(zero, perr, skipped)
		return
	}
	if !ex.run.Add(&c.ctx.Node, &ex.env.epoch) {
		// The executor is closing: the call will not run. settle gives the
		// slot back.
		var zero T
		c.settle(zero, ErrClosed, skipped)
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
		// run. settle gives the slot back, also if the deadline has
		// already fired in between.
		var perr *breaker.PanicError
		if errors.As(err, &perr) {
			ex.counts().panics.Add(1)
		} else {
			err = fmt.Errorf("executor: %s: the Runner refused the call: %w", ex.name, err)
		}
		var zero T
		c.settle(zero, err, skipped)
	}
}

// runOn hands c to the user's Runner. A Runner that panics or ends the
// goroutine (runtime.Goexit) refuses the call with a *breaker.PanicError
// naming it, so that its slot, active count and future are not lost. The
// task runs the call at most once whatever the Runner does with it: a call
// settled twice would give its slot back twice. docs/design.md, "Where
// user code runs", has the cases.
func runOn[T any](r Runner, c *call[T]) (err error) {
	t := &runnerTask[T]{c: c}
	returned := false
	defer func() {
		if v := recover(); v != nil {
			err = &breaker.PanicError{Callback: "GroupConfig.Runner.Go", Value: v, Stack: debug.Stack()}
		}
		if err != nil && !t.claim() {
			err = nil // it ran (or runs) all the same: its run settles it
		}
		if err == nil && !returned && t.claim() {
			c.ctx.ex.counts().panics.Add(1)
			var zero T
			c.settle(zero, &breaker.PanicError{Callback: "GroupConfig.Runner.Go", Value: errCallbackGoexit}, skipped)
		}
	}()
	err = r.Go(t.run)
	returned = true
	return err
}

// runnerTask is a call handed to a Runner: whoever claims it first, its
// run or the refusal of it, settles the call.
type runnerTask[T any] struct {
	c       *call[T]
	claimed atomic.Bool
}

func (t *runnerTask[T]) claim() bool { return !t.claimed.Swap(true) }

func (t *runnerTask[T]) run() {
	if t.claim() {
		t.c.run()
	}
}

// run is the worker's side: call fn, then settle. A function that ends
// its goroutine with runtime.Goexit is settled too, with an error.
func (c *call[T]) run() {
	returned := false
	defer func() {
		if !returned {
			var zero T
			c.settle(zero, &breaker.PanicError{Callback: "fn", Value: breaker.ErrGoexit, Stack: debug.Stack()}, panicked)
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
	// settle's two steps, its context's end here, one frame shallower than
	// from settle: ending a context that fn made real (by asking it for a
	// value while the caller's can end) cancels a context.WithCancelCause
	// child, which leaves its parent's map of children, deep below; from
	// settle, that took a new goroutine's 2 KB stack past its limit, and
	// every such call copied its stack, 3× the call's time
	// (TestACallFitsANewGoroutinesStack).
	c.ctx.Finish()
	c.settleEnded(v, err, end)
}

// callEnd says how a call's function ended, for settle.
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
