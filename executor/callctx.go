package executor

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fusebox-go/fusebox/internal/timeline"
)

// callCtx is the context a protected function receives. It is embedded in
// the call (no allocation) and behaves exactly like the context of
//
//	ctx, cancel := context.WithDeadline(callerCtx, deadline)
//	defer cancel()
//	fn(ctx)
//
// Deadline is the earlier of the caller's deadline and the invocation
// deadline; Done closes and Err turns non-nil together, when that deadline
// passes (the executor's timeline fires), when the caller's context ends,
// or when fn has returned (context.Canceled, as the deferred cancel would);
// Value reads the caller's values; context.Cause reports why it ended: the
// caller's cause when the caller's context ended it, DeadlineExceeded at
// the deadline, Canceled once fn has returned.
//
// It relies only on documented behaviour of the context package. Its
// AfterFunc method is the one context.AfterFunc and the With* functions use
// for a custom parent, so contexts derived from it follow it without a
// goroutine each. context.Cause finds the cause through Value; while the
// caller's context can end, the first Value call therefore makes a real
// child of it, context.WithCancelCause (one allocation, registered with
// the caller's context until the call ends), cancelled with this context's
// own cause when it ends first, and reads values through it. A function
// that reads no value, or a caller whose context cannot end
// (context.Background), costs nothing of that.
//
// What it saves is paid for lazily: everything beyond the caller's context
// and the deadline lives in a ctxState made only when somebody needs it
// (Done, AfterFunc, a Value that must answer for the cause, the end of the
// context while somebody can see it, a timeout). The done channel is made
// only if somebody asks for it, since a function that never looks at Done
// learns about cancellation from Err, which checks the caller's context
// itself. While the caller's context can end, Done is the channel of a
// child of it (one context.WithCancel), which the context package ends
// with the caller's context and this one ends when it ends first:
// following the caller's context costs no watcher of this package's. Only
// AfterFunc watches the caller's context itself (one context.AfterFunc),
// to run its functions when it ends. A call that ends before its deadline, whose function never asked
// for Done, takes no lock and makes no ctxState at all.
type callCtx struct {
	parent context.Context
	ex     *Executor // the call's; its epoch is the clock of node.At
	// node is the call's entry in its executor's timeline; node.At, the
	// deadline in ns since the executor's epoch, is set before fn runs
	// and never changes. node.done is set when fn has returned: the
	// context is over, as if the deferred cancel of context.WithDeadline
	// had run.
	node timeline.Deadline
	x    atomic.Pointer[ctxState] // made (once) by state
}

// ctxState is the rarely needed part of a callCtx.
type ctxState struct {
	mu       sync.Mutex
	done     chan struct{}
	err      error
	byParent bool        // err came from the caller's context
	unwatch  func() bool // stops watching parent; nil while not watching
	afters   map[*afterFunc]struct{}
	// inner is a child of the caller's context that carries this
	// context's cause for context.Cause (see Value); nil until then.
	inner       context.Context
	cancelInner context.CancelCauseFunc
	// parentDone, while the caller's context can end, is what Done
	// returns instead of done: the channel of a child of the caller's
	// context (context.WithCancel), which the context package ends with
	// the caller's and endLocked ends with this one (stopDone). Not
	// inner's: a context derived from this one would take inner for this
	// context (same channel) and end with inner's Err, always Canceled.
	parentDone <-chan struct{}
	stopDone   context.CancelFunc

	// A call whose deadline (or Close) came before its function returned:
	// terr is the error its future resolves with; meet reaches 2 once the
	// outcome is recorded and the function has returned; grace is listed
	// for the while the future waits for the function (timeoutGrace).
	terr  error
	meet  atomic.Int32
	grace timeline.Deadline
}

// state returns the ctxState, making and publishing it. Publishing it
// before looking at node.done, while finish sets node.done before looking
// for it, means that with sequentially consistent atomics at least one side
// sees the other: either whoever made it sees the call is over, or finish
// sees it and ends the context for its watchers.
func (c *callCtx) state() *ctxState {
	if x := c.x.Load(); x != nil {
		return x
	}
	c.x.CompareAndSwap(nil, &ctxState{})
	return c.x.Load()
}

type afterFunc struct{ f func() }

func (c *callCtx) Deadline() (time.Time, bool) {
	return c.ex.env.epoch.Add(time.Duration(c.node.At)), true
}

func (c *callCtx) Value(key any) any {
	if x := c.x.Load(); x != nil {
		x.mu.Lock()
		inner := x.inner
		x.mu.Unlock()
		if inner != nil {
			return inner.Value(key)
		}
	}
	if c.parent.Done() == nil {
		// The caller's context cannot end: nothing in it can answer for
		// this context's cause, and context.Cause falls back to Err.
		return c.parent.Value(key)
	}
	return c.innerCtx().Value(key)
}

// innerCtx returns the child of the caller's context that answers for this
// one's values and cause, making it the first time.
func (c *callCtx) innerCtx() context.Context {
	x := c.state()
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.inner == nil {
		parent := c.parent
		if x.err != nil && !x.byParent {
			// Ended for a reason of its own: a caller's cancellation
			// since then must not become its cause.
			parent = context.WithoutCancel(parent)
		}
		x.inner, x.cancelInner = context.WithCancelCause(parent)
		switch {
		case x.err != nil:
			x.cancelInner(x.err) // a no-op if the caller's context ended it
		case c.node.Done():
			c.endLocked(x, context.Canceled) // fn has returned
		}
	}
	return x.inner
}

// Done returns, while the caller's context can end, the channel of a child
// of it (parentDone): the context package closes it when the caller's
// context ends, and endLocked when this one ends first, so following the
// caller's context costs no watcher of this package's. Otherwise (the
// caller's context cannot end, or this one has ended already) the channel
// is its own.
func (c *callCtx) Done() <-chan struct{} {
	x := c.state()
	x.mu.Lock()
	defer x.mu.Unlock()
	switch {
	case x.parentDone != nil:
		return x.parentDone
	case x.done != nil:
		return x.done
	case x.err == nil && !c.node.Done() && c.parent.Done() != nil:
		var child context.Context
		child, x.stopDone = context.WithCancel(c.parent)
		x.parentDone = child.Done()
		return x.parentDone
	}
	x.done = make(chan struct{})
	switch {
	case x.err != nil:
		// Ended before anyone asked: a closed channel of its own (a
		// rare path; the future package keeps the library's shared
		// closed channel for its hot one).
		close(x.done)
	case c.node.Done():
		c.endLocked(x, context.Canceled) // fn has returned
	}
	return x.done
}

func (c *callCtx) Err() error {
	if x := c.x.Load(); x != nil {
		x.mu.Lock()
		err := x.err
		x.mu.Unlock()
		if err != nil {
			return err
		}
	}
	// Nobody is watching the parent (nobody asked for Done): look now, and
	// end this context with it so that Done and Err agree from here on.
	if err := c.parent.Err(); err != nil {
		c.cancelByParent(err)
		return c.Err()
	}
	if c.node.Done() {
		c.cancel(context.Canceled)
		return c.Err()
	}
	return nil
}

// AfterFunc makes context.AfterFunc and context.WithCancel on a call's
// context cheap: without it they would start a goroutine to watch Done.
func (c *callCtx) AfterFunc(f func()) (stop func() bool) {
	x := c.state()
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.err != nil {
		go f()
		return func() bool { return false }
	}
	if x.afters == nil {
		x.afters = make(map[*afterFunc]struct{})
	}
	a := &afterFunc{f}
	x.afters[a] = struct{}{}
	if c.node.Done() {
		c.endLocked(x, context.Canceled)
	} else {
		c.watchParentLocked(x)
	}
	return func() bool {
		x.mu.Lock()
		defer x.mu.Unlock()
		_, ok := x.afters[a]
		delete(x.afters, a)
		return ok
	}
}

// watchParentLocked starts following the parent's cancellation, once.
func (c *callCtx) watchParentLocked(x *ctxState) {
	if c.parent.Done() == nil || x.unwatch != nil {
		return
	}
	parent := c.parent
	x.unwatch = context.AfterFunc(parent, func() { c.cancelByParent(parent.Err()) })
}

// cancel ends the context with err: DeadlineExceeded at the invocation
// deadline, the parent's error when it ends, Canceled once fn has returned.
// The first cause wins.
func (c *callCtx) cancel(err error) {
	x := c.state()
	x.mu.Lock()
	c.endLocked(x, err)
	x.mu.Unlock()
}

// cancelByParent ends the context because the caller's ended.
func (c *callCtx) cancelByParent(err error) {
	x := c.state()
	x.mu.Lock()
	if x.err == nil {
		x.byParent = true
	}
	c.endLocked(x, err)
	x.mu.Unlock()
}

func (c *callCtx) endLocked(x *ctxState, err error) {
	if x.err != nil {
		return
	}
	x.err = err
	if x.done != nil {
		close(x.done)
	}
	if x.stopDone != nil {
		x.stopDone() // closes parentDone, and leaves the caller's context
	}
	if x.afters != nil {
		startAfters(x.afters)
		x.afters = nil
	}
	if x.cancelInner != nil {
		// A no-op if the caller's context ended it first, with its own
		// cause; otherwise it also leaves the caller's context.
		x.cancelInner(err)
	}
	if x.unwatch != nil {
		x.unwatch() // does not wait for the watcher: safe under mu
		x.unwatch = nil
	}
}

// startAfters starts the functions given to the context's AfterFunc. It is
// a function of its own so that the map iterator's frame is not on the
// stack of every call that ends a real context (see call.run).
//
//go:noinline
func startAfters(afters map[*afterFunc]struct{}) {
	for a := range afters {
		go a.f()
	}
}

// finish is called when fn has returned: the context is over, as if the
// deferred cancel of context.WithDeadline had run. Contexts nobody watched
// end lazily, when next asked (Err, Done), with no lock taken now.
func (c *callCtx) finish() {
	c.node.Finish() // the timeline drops the entry lazily
	if c.x.Load() != nil {
		c.cancel(context.Canceled)
	}
}

func (c *callCtx) String() string { return "fusebox call context" }
