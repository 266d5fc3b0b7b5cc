package executor

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/future"
	"github.com/fusebox-go/fusebox/internal/slots"
)

// Submit runs fn on the executor's supplier and returns its future, or a
// *RejectedError (breaker.ErrOpen, ErrSaturated, ErrClosed) without calling
// fn and without allocating. It never blocks: a call that finds every slot
// busy waits in the queue, if there is one, as a queue entry.
//
// fn receives a context derived from ctx (its values and cancellation) with
// the invocation deadline, counted from the moment fn starts; it ends when
// fn returns. It behaves as context.WithDeadline(ctx, deadline) with a
// deferred cancel would: Deadline is the earlier of ctx's and the
// invocation deadline; Done and Err change together, to DeadlineExceeded at
// the deadline, ctx's error when ctx ends first, or Canceled once fn has
// returned; context.Cause gives ctx's cause when ctx ended it and Err
// otherwise; contexts derived from it, and context.AfterFunc, follow it
// without a goroutine each. The future resolves with fn's result; with
// ErrTimeout at the deadline even if fn ignores its context (the slot stays
// held until fn really returns; the future waits at most 5 ms, or a tenth
// of the timeout, for fn to return first, so that a caller who resubmits at
// once finds the slot of a function that honours its context free again);
// with a *breaker.PanicError if fn panics; with ErrQueueTimeout if it
// waited in the queue too long. A caller that cancels ctx gets ctx's error,
// and the call counts as Ignored on the breaker: the supplier did nothing
// wrong. A call whose caller has given up before it starts is not made.
//
// The path of one call: the breaker admits it (open: breaker.ErrOpen,
// nothing touched); the bulkhead gives it a slot, or a queue place. None
// free: Submit returns ErrSaturated, and if the slots are stuck (held by
// calls far older than the supplier's calls take, see StuckConfig) the
// breaker trips with reason Saturation (QueueFull with a queue) in this
// very call; if they are merely busy, only this call is refused
// (RejectedBusy) and the breaker learns nothing. fn runs on a goroutine of its own; when it returns the
// slot is released first, the outcome recorded on the breaker second, and
// the future completed last, so a caller that awaits and resubmits at once
// never meets its own slot.
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
	if ctx == nil || ex == nil {
		return nil, errBadCall(ctx, ex)
	}
	if ex.isClosed() {
		return nil, ex.reject(RejectedClosed)
	}
	if !ex.used.Load() {
		ex.used.Store(true)
	}
	permit, err := ex.br.Allow()
	if err != nil {
		// The breaker counted the rejection (Stats adds it in), so failing
		// fast is a clock read, a few loads and one atomic add.
		rc := ex.counts()
		if rc.shadow.Load() {
			return nil, rc.shadowOpen()
		}
		return nil, &rc.errs[RejectedOpen]
	}
	// Most refusals in a burst find the bulkhead full of young calls:
	// refuse those before counting the call in, with no write but the
	// rejection count. A probe, or a bulkhead that may be stuck, takes
	// the full path below.
	if ex.bh.Full() && !isProbe(permit) && !ex.isStuck() {
		return nil, ex.refuseBusy()
	}
	// Count the call in and look for Close in one step: a Close (or an
	// eviction) either came first and we leave, or it waits for this call.
	if ex.active.Add(1)&closedBit != 0 {
		permit.Ignore()
		ex.leave()
		return nil, ex.reject(RejectedClosed)
	}
	if ex.bh.Admit(nil) == slots.Acquired {
		c := newCall(ctx, ex, fn, permit)
		c.start()
		return c, nil
	}
	qt := ex.queued.Load()
	if qt == nil || ex.bh.QueueFull() {
		return nil, ex.saturated(permit)
	}
	c := newCall(ctx, ex, fn, permit)
	if !c.enqueue(qt) {
		return nil, ex.saturated(permit)
	}
	return c, nil
}

// enqueue puts a call that found every slot busy in the queue qt, or
// starts it if a slot was freed meanwhile. It reports false if the queue
// was full.
func (c *call[T]) enqueue(qt *lazyTimeline) bool {
	ex, ctx := c.ctx.ex, c.ctx.parent
	q := &queueState{}
	q.waiter.Value = c
	q.node.owner, q.node.kind = c, queueDeadline
	if c.fn == nil {
		q.granted = make(chan struct{}) // a lease waits for its slot
	}
	c.q = q
	// The mutex is held until the call is fully queued, so that a Release
	// handing it a slot (promote), its queue deadline or its caller's
	// cancellation (dequeue) all find it set up.
	q.mu.Lock()
	switch ex.bh.Admit(&q.waiter) {
	case slots.Queued:
		c.state.Store(stQueued)
		q.since = ex.now()
		q.node.at = addSat(q.since, time.Duration(ex.queueTO.Load()))
		listed := qt.add(&q.node, &ex.env.epoch)
		if listed && ctx.Done() != nil {
			q.unwatch = context.AfterFunc(ctx, func() { c.dequeue(ctx.Err()) })
		}
		q.mu.Unlock()
		if !listed { // Close has already emptied the queue: leave it too
			c.dequeue(ErrClosed)
		}
	case slots.Acquired:
		q.mu.Unlock()
		c.q = nil
		c.start()
	default:
		q.mu.Unlock()
		return false
	}
	return true
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
	if isProbe(p) {
		defer ex.leave()
		err := ex.reject(RejectedOpen)
		reject(p, breaker.ProbeDeferred)
		return err
	}
	if !ex.isStuck() {
		return ex.busy() // young calls: refuse this one, leave the breaker alone
	}
	r, br := RejectedSaturated, breaker.Saturation
	if _, queue, _ := ex.bh.Size(); queue > 0 {
		r, br = RejectedQueueFull, breaker.QueueFull
		rc := ex.counts()
		rc.unservedAtTrip.Store(rc.unserved.Load())
	}
	defer ex.leave()
	err := ex.reject(r)
	reject(p, br)
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

// release frees the slot of a call whose function returned, starting the
// oldest queued call if the bulkhead hands the slot over to it.
func (ex *Executor) release() {
	if w := ex.bh.Release(); w != nil {
		w.Value.(promoter).promote()
	}
}

type promoter interface{ promote() }

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
	span    uint32      // from the call's start to its deadline, encoded by spanOf (see startedAt)
	ctx     callCtx     // with the call's entry in ex.run, ctx.node
	q       *queueState // only for a call that had to queue
}

// queueState is what a call needs while it waits in the queue.
type queueState struct {
	mu      sync.Mutex
	waiter  slots.Waiter
	node    deadline // in ex.queued while it waits
	since   int64    // when it was queued (executor clock), for the stuck criterion
	unwatch func() bool
	granted chan struct{} // a lease's: closed when it has a slot
}

func newCall[T any](ctx context.Context, ex *Executor, fn func(context.Context) (T, error), p breaker.Permit) *call[T] {
	c := &call[T]{fn: fn, permit: p}
	c.ctx.parent = ctx
	c.ctx.ex = ex
	c.ctx.node.owner = c // kind: invocationDeadline, the zero value
	return c
}

// start runs a call that holds a slot.
func (c *call[T]) start() {
	ex := c.ctx.ex
	c.state.Store(stRunning)
	now := ex.now()
	at := addSat(now, time.Duration(ex.timeout.Load()))
	if d, ok := c.ctx.parent.Deadline(); ok {
		if pd := int64(d.Sub(ex.env.epoch)); pd < at {
			at = pd // the caller's deadline comes first: time the call out then
		}
	}
	c.span = spanOf(at - now) // for startedAt
	c.ctx.node.at = at
	if perr := c.ctx.parent.Err(); perr != nil || at <= now {
		// The caller has given up already: don't make the call, and don't
		// let the timer count it as the supplier's timeout.
		if perr == nil {
			perr = context.DeadlineExceeded
		}
		var zero T
		c.settle(zero, perr, skipped)
		return
	}
	if !ex.run.add(&c.ctx.node, &ex.env.epoch) {
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

// runOn hands c to the user's Runner. A Runner that panics refuses the call
// with a *breaker.PanicError naming it: the panic may happen inside another
// call's settle (a queued call promoted to the slot it freed), on a
// goroutine of the executor's, where nothing else would recover it.
//
// A Runner that ends the goroutine instead (runtime.Goexit) cannot be
// stopped from ending it: the call is settled on the way out, as refused
// with a *breaker.PanicError, so that its slot, its active count and its
// future are not lost. The goroutine (the submitter's, or that of the
// call whose end promoted c) ends; a call whose settle it interrupts is
// settled by settle's own deferred call.
func runOn[T any](r Runner, c *call[T]) (err error) {
	returned := false
	defer func() {
		if v := recover(); v != nil {
			err = &breaker.PanicError{Callback: "GroupConfig.Runner.Go", Value: v, Stack: debug.Stack()}
		} else if !returned {
			c.ctx.ex.counts().panics.Add(1)
			var zero T
			c.settle(zero, &breaker.PanicError{Callback: "GroupConfig.Runner.Go", Value: errCallbackGoexit}, skipped)
		}
	}()
	err = r.Go(c.run)
	returned = true
	return err
}

// run is the worker's side: call fn, then settle. A function that ends
// its goroutine with runtime.Goexit is settled too, with an error.
func (c *call[T]) run() {
	returned := false
	defer func() {
		if !returned {
			var zero T
			c.settle(zero, errGoexit, ran)
		}
	}()
	var v T
	var err error
	end := skipped
	if perr := c.ctx.parent.Err(); perr != nil {
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
	c.settle(v, err, end)
}

// callEnd says how a call's function ended, for settle.
type callEnd uint8

const (
	ran      callEnd = iota // fn returned
	skipped                 // fn was never called
	panicked                // fn panicked (err is the *breaker.PanicError)
)

var errGoexit = errors.New("executor: the function called runtime.Goexit")

func (c *call[T]) invoke() (v T, end callEnd, err error) {
	defer func() {
		if r := recover(); r != nil {
			err, end = newPanicError(r), panicked
		}
	}()
	v, err = c.fn(&c.ctx)
	return v, ran, err
}

// settle ends a call whose function has returned (or that never ran): slot
// first, outcome second, future last.
func (c *call[T]) settle(v T, err error, end callEnd) {
	ex := c.ctx.ex
	won := c.state.CompareAndSwap(stInvoking, stDone) || c.state.CompareAndSwap(stRunning, stDone)
	// Listed until now: the invocation deadline (won) or the grace period
	// after it (expired, see expire); or never, for a call that never ran.
	// Ending the context marks the entry done too, one atomic store: the
	// timeline drops it lazily.
	c.ctx.finish()
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
	x := c.ctx.x.Load()
	x.grace.finish() // the function has returned: no need to wait for it
	if x.meet.Add(1) == 2 {
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
	case end == panicked:
		// A panic is a bug in fn: a failure whatever the classifier would
		// say of its value (panic(context.Canceled) included) and whether
		// or not the caller had given up.
		ex.counts().panics.Add(1)
		_ = record(c.permit, breaker.Failure, err) // a Match that panics too: the call's panic is the error to report
		c.ranFor(breaker.Failure, now)
	case err != nil && errors.Is(c.ctx.parent.Err(), context.Canceled):
		ex.callerCancelled(c.permit)
		c.ranFor(breaker.Ignored, now)
	case err != nil && now >= c.ctx.node.at:
		// The function noticed its deadline (or its caller's) and returned
		// before the timer got to it: the same timeout, reported the same
		// way whichever side of the race won.
		ex.counts().timeouts.Add(1)
		v, err = zero, ErrTimeout
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
			ex.observe(d, n, now < c.ctx.node.at, c.permit)
			if a := ex.adapt.Load(); a != nil && n%adaptEvery == 0 {
				a.observe(ex, d, now, now < c.ctx.node.at)
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
		drained(ex.br)
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
	x := c.ctx.state()
	perr := c.ctx.parent.Err()
	x.terr = ErrTimeout
	if errors.Is(perr, context.Canceled) {
		x.terr = perr
	}
	// The state and terr are made and written before the CAS, and read by
	// settle only after its own CAS failed, that is after observing this
	// one. overdue is counted before the CAS too, so that settle's
	// decrement can never run first.
	ex.counts().overdue.Add(c.overdueUnit())
	called := c.state.CompareAndSwap(stInvoking, stExpired)
	if !called && !c.state.CompareAndSwap(stRunning, stExpired) {
		ex.counts().overdue.Add(-c.overdueUnit())
		return
	}
	// A callback below (Classify, Match, a transition listener) that ends
	// this goroutine (runtime.Goexit) instead of returning: the deferred
	// call ends the call as if it had panicked.
	recorded := false
	defer func() {
		if !recorded {
			ex.counts().panics.Add(1)
			x.terr = goexitError()
			c.expired()
		}
	}()
	switch {
	case x.terr != ErrTimeout:
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
		o, perr := ex.count(c.permit, ErrTimeout)
		c.ranFor(o, ex.now())
		if perr != nil {
			// A classifier that panicked on the timer goroutine: the call
			// resolves with the panic instead of the timeout. settle reads
			// terr only after meet says this side is done.
			x.terr = perr
		}
	}
	recorded = true
	c.expired()
}

// expired ends the context of a call whose deadline came first, its
// outcome recorded, and resolves its future or lists its grace period.
func (c *call[T]) expired() {
	ex, x := c.ctx.ex, c.ctx.x.Load()
	c.ctx.cancel(context.DeadlineExceeded)
	// The future resolves when both have happened: the timeout is recorded
	// (here) and the function has returned (settle), or when the grace
	// period is over.
	if x.meet.Add(1) == 2 {
		c.resolveTimedOut()
		return
	}
	x.grace.owner, x.grace.kind = c, graceDeadline
	x.grace.at = ex.now() + ex.grace()
	if !ex.run.add(&x.grace, &ex.env.epoch) {
		c.resolveTimedOut()
	}
}

// resolveTimedOut resolves the future of a call whose deadline came first,
// once its function has returned or its grace period is over.
func (c *call[T]) resolveTimedOut() {
	var zero T
	c.promise.Complete(zero, c.ctx.x.Load().terr)
}

// onDeadline is the timer telling the call that one of its deadlines
// passed while the entry was live.
func (c *call[T]) onDeadline(k deadlineKind) {
	switch k {
	case invocationDeadline, outsideDeadline:
		c.expire()
	case graceDeadline:
		c.resolveTimedOut()
	case queueDeadline:
		c.dequeue(ErrQueueTimeout)
	}
}

// onClose is Close giving up on an entry still listed.
func (c *call[T]) onClose(k deadlineKind) {
	switch k {
	case invocationDeadline, outsideDeadline:
		c.abandon()
	case graceDeadline:
		c.resolveTimedOut()
	case queueDeadline:
		c.dequeue(ErrClosed)
	}
}

// abandon is Close giving up on a running call: its future resolves with
// ErrClosed; fn runs on until it returns and then gives its slot back.
func (c *call[T]) abandon() {
	x := c.ctx.state()
	x.terr = ErrClosed
	c.ctx.ex.counts().overdue.Add(c.overdueUnit())
	if !c.state.CompareAndSwap(stInvoking, stExpired) && !c.state.CompareAndSwap(stRunning, stExpired) {
		c.ctx.ex.counts().overdue.Add(-c.overdueUnit())
		return // it has just returned: settle resolves it
	}
	c.permit.Ignore()
	c.ctx.cancel(context.Canceled)
	x.meet.Add(1)
	c.resolveTimedOut()
}

// promote starts a queued call that a Release handed a slot.
func (c *call[T]) promote() {
	q := c.q
	q.mu.Lock() // wait until Submit has finished queueing it
	q.node.finish()
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
	qs.node.finish()
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
	default: // ErrClosed
		c.permit.Ignore()
	}
	finished = true
	var zero T
	c.promise.Complete(zero, err)
	ex.leave()
}

// addSat returns now + d, saturating instead of overflowing.
func addSat(now int64, d time.Duration) int64 {
	if int64(d) > math.MaxInt64-now {
		return math.MaxInt64
	}
	return now + int64(d)
}
