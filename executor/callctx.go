package executor

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
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
// What it saves is paid for lazily: the done channel is made only if
// somebody asks for it, and the caller's context is watched (one
// context.AfterFunc) only then, since a function that never looks at Done
// learns about cancellation from Err, which checks the caller's context
// itself. A call whose function never asked for Done takes no lock at all.
type callCtx struct {
	parent   context.Context
	ex       *Executor // the call's; its epoch is the clock of deadline
	deadline int64     // ns since the executor's epoch
	// node is the call's entry in its executor's timeline. node.done is
	// set when fn has returned: the context is over, as if the deferred
	// cancel of context.WithDeadline had run.
	node deadline

	mu       sync.Mutex
	done     chan struct{}
	err      error
	w        atomic.Pointer[watch] // made (under mu) when Done or AfterFunc is first used
	byParent bool                  // err came from the caller's context
	span     uint32                // from the call's start to its deadline, encoded by spanOf (see call.startedAt)
}

// watch is the rarely needed part of a callCtx, guarded by its mu.
type watch struct {
	unwatch func() bool // stops watching parent; nil while not watching
	afters  map[*afterFunc]struct{}
	// inner is a child of the caller's context that carries this
	// context's cause for context.Cause (see Value); nil until then.
	inner       context.Context
	cancelInner context.CancelCauseFunc
}

// watchState returns the watch, making and publishing it. Called with mu
// held. Publishing w before looking at node.done, while finish sets
// node.done before looking at w, means that with sequentially consistent
// atomics at least one side sees the other: either the new watcher sees the
// call is over, or finish sees the watcher and ends the context for it.
func (c *callCtx) watchState() *watch {
	w := c.w.Load()
	if w == nil {
		w = &watch{}
		c.w.Store(w)
	}
	return w
}

type afterFunc struct{ f func() }

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (c *callCtx) Deadline() (time.Time, bool) {
	return c.ex.env.epoch.Add(time.Duration(c.deadline)), true
}

func (c *callCtx) Value(key any) any {
	if w := c.w.Load(); w != nil && w.inner != nil {
		return w.inner.Value(key)
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
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.watchState()
	if w.inner == nil {
		parent := c.parent
		if c.err != nil && !c.byParent {
			// Ended for a reason of its own: a caller's cancellation
			// since then must not become its cause.
			parent = context.WithoutCancel(parent)
		}
		w.inner, w.cancelInner = context.WithCancelCause(parent)
		switch {
		case c.err != nil:
			w.cancelInner(c.err) // a no-op if the caller's context ended it
		case c.node.done.Load():
			c.endLocked(context.Canceled) // fn has returned
		}
	}
	return w.inner
}

func (c *callCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		if c.err != nil {
			return closedChan
		}
		c.done = make(chan struct{})
		c.watchState()
		if c.node.done.Load() {
			c.endLocked(context.Canceled)
			return c.done
		}
		c.watchParentLocked()
	}
	return c.done
}

func (c *callCtx) Err() error {
	c.mu.Lock()
	err := c.err
	c.mu.Unlock()
	if err != nil {
		return err
	}
	// Nobody is watching the parent (nobody asked for Done): look now, and
	// end this context with it so that Done and Err agree from here on.
	if err := c.parent.Err(); err != nil {
		c.cancelByParent(err)
		return c.Err()
	}
	if c.node.done.Load() {
		c.cancel(context.Canceled)
		return c.Err()
	}
	return nil
}

// AfterFunc makes context.AfterFunc and context.WithCancel on a call's
// context cheap: without it they would start a goroutine to watch Done.
func (c *callCtx) AfterFunc(f func()) (stop func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		go f()
		return func() bool { return false }
	}
	w := c.watchState()
	if w.afters == nil {
		w.afters = make(map[*afterFunc]struct{})
	}
	a := &afterFunc{f}
	w.afters[a] = struct{}{}
	if c.node.done.Load() {
		c.endLocked(context.Canceled)
	} else {
		c.watchParentLocked()
	}
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		_, ok := w.afters[a]
		delete(w.afters, a)
		return ok
	}
}

// watchParentLocked starts following the parent's cancellation, once.
func (c *callCtx) watchParentLocked() {
	w := c.w.Load()
	if c.parent.Done() == nil || w.unwatch != nil {
		return
	}
	parent := c.parent
	w.unwatch = context.AfterFunc(parent, func() { c.cancelByParent(parent.Err()) })
}

// cancel ends the context with err: DeadlineExceeded at the invocation
// deadline, the parent's error when it ends, Canceled once fn has returned.
// The first cause wins.
func (c *callCtx) cancel(err error) {
	c.mu.Lock()
	c.endLocked(err)
	c.mu.Unlock()
}

// cancelByParent ends the context because the caller's ended.
func (c *callCtx) cancelByParent(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.byParent = true
	}
	c.endLocked(err)
	c.mu.Unlock()
}

func (c *callCtx) endLocked(err error) {
	if c.err != nil {
		return
	}
	c.err = err
	if c.done != nil {
		close(c.done)
	}
	if w := c.w.Load(); w != nil {
		for a := range w.afters {
			go a.f()
		}
		w.afters = nil
		if w.cancelInner != nil {
			// A no-op if the caller's context ended it first, with its
			// own cause; otherwise it also leaves the caller's context.
			w.cancelInner(err)
		}
		if w.unwatch != nil {
			w.unwatch() // does not wait for the watcher: safe under mu
			w.unwatch = nil
		}
	}
}

// finish is called when fn has returned: the context is over, as if the
// deferred cancel of context.WithDeadline had run. Contexts nobody watched
// end lazily, when next asked (Err, Done), with no lock taken now.
func (c *callCtx) finish() {
	c.node.finish() // the timeline drops the entry lazily
	if c.w.Load() != nil {
		c.cancel(context.Canceled)
	}
}

func (c *callCtx) String() string { return "fusebox call context" }
