// Package callctx is the context a protected call's function receives: it
// behaves as one made by context.WithDeadline from the caller's context,
// without costing one per call. It is embedded in the executor's call
// record (no allocation); what only some calls need lives in a State made
// on first use. Mechanism: docs/design.md, "The call's context".
package callctx

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/fusebox-go/fusebox/internal/timeline"
)

// Ctx is a call's context but for Deadline, which its owner adds (the
// deadline is Node.At on the owner's clock). Done closes and Err turns
// non-nil together, when the owner ends it at the deadline (Cancel), when
// the caller's context ends, or once the function has returned (Finish:
// context.Canceled, as the deferred cancel would); Value reads the
// caller's values, and context.Cause reports why it ended. The zero Ctx
// with Parent set is ready to use; it must not be copied once used.
type Ctx struct {
	Parent context.Context
	// Node is the call's entry in its owner's timeline: Node.At, the
	// deadline, is set before the function runs and never changes;
	// Node.Done reports that the function has returned.
	Node timeline.Deadline
	x    atomic.Pointer[State] // made (once) by State
}

// State is the rarely needed part of a Ctx, made by the first that needs
// it: Done, AfterFunc, a Value that must answer for the cause, the end of
// the context while somebody can see it, a timeout.
type State struct {
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

	// Expiry is the owner's, for a call whose deadline came before its
	// function returned; this package never touches it.
	Expiry Expiry
}

// Expiry is what a call whose deadline came first keeps until its future
// resolves.
type Expiry struct {
	Err   error             // what the future resolves with
	Meet  atomic.Int32      // 2 once the outcome is recorded and the function has returned
	Grace timeline.Deadline // listed while the future waits for the function
}

// Made returns the State if it has been made, else nil.
func (c *Ctx) Made() *State { return c.x.Load() }

// State returns the call's State, making and publishing it. Publishing it
// before looking at node.done, while finish sets node.done before looking
// for it, means that with sequentially consistent atomics at least one side
// sees the other: either whoever made it sees the call is over, or finish
// sees it and ends the context for its watchers.
func (c *Ctx) State() *State {
	if x := c.x.Load(); x != nil {
		return x
	}
	c.x.CompareAndSwap(nil, &State{})
	return c.x.Load()
}

type afterFunc struct{ f func() }

// Value reads the caller's values; it also answers for the cause, for
// context.Cause, once the caller's context can end.
func (c *Ctx) Value(key any) any {
	if x := c.x.Load(); x != nil {
		x.mu.Lock()
		inner := x.inner
		x.mu.Unlock()
		if inner != nil {
			return inner.Value(key)
		}
	}
	if c.Parent.Done() == nil {
		// The caller's context cannot end: nothing in it can answer for
		// this context's cause, and context.Cause falls back to Err.
		return c.Parent.Value(key)
	}
	return c.innerCtx().Value(key)
}

// innerCtx returns the child of the caller's context that answers for this
// one's values and cause, making it the first time.
func (c *Ctx) innerCtx() context.Context {
	x := c.State()
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.inner == nil {
		parent := c.Parent
		if x.err != nil && !x.byParent {
			// Ended for a reason of its own: a caller's cancellation
			// since then must not become its cause.
			parent = context.WithoutCancel(parent)
		}
		x.inner, x.cancelInner = context.WithCancelCause(parent)
		switch {
		case x.err != nil:
			x.cancelInner(x.err) // a no-op if the caller's context ended it
		case c.Node.Done():
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
func (c *Ctx) Done() <-chan struct{} {
	x := c.State()
	x.mu.Lock()
	defer x.mu.Unlock()
	switch {
	case x.parentDone != nil:
		return x.parentDone
	case x.done != nil:
		return x.done
	case x.err == nil && !c.Node.Done() && c.Parent.Done() != nil:
		var child context.Context
		child, x.stopDone = context.WithCancel(c.Parent)
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
	case c.Node.Done():
		c.endLocked(x, context.Canceled) // fn has returned
	}
	return x.done
}

// Err is nil until the context ends, then why it ended.
func (c *Ctx) Err() error {
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
	if err := c.Parent.Err(); err != nil {
		c.cancelByParent(err)
		return c.Err()
	}
	if c.Node.Done() {
		c.Cancel(context.Canceled)
		return c.Err()
	}
	return nil
}

// AfterFunc makes context.AfterFunc and context.WithCancel on a call's
// context cheap: without it they would start a goroutine to watch Done.
func (c *Ctx) AfterFunc(f func()) (stop func() bool) {
	x := c.State()
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
	if c.Node.Done() {
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
func (c *Ctx) watchParentLocked(x *State) {
	if c.Parent.Done() == nil || x.unwatch != nil {
		return
	}
	parent := c.Parent
	x.unwatch = context.AfterFunc(parent, func() { c.cancelByParent(parent.Err()) })
}

// Cancel ends the context with err: DeadlineExceeded at the invocation
// deadline, the parent's error when it ends, Canceled once fn has returned.
// The first cause wins.
func (c *Ctx) Cancel(err error) {
	x := c.State()
	x.mu.Lock()
	c.endLocked(x, err)
	x.mu.Unlock()
}

// cancelByParent ends the context because the caller's ended.
func (c *Ctx) cancelByParent(err error) {
	x := c.State()
	x.mu.Lock()
	if x.err == nil {
		x.byParent = true
	}
	c.endLocked(x, err)
	x.mu.Unlock()
}

func (c *Ctx) endLocked(x *State, err error) {
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
// stack of every call that ends a real context (see the executor's call.run).
//
//go:noinline
func startAfters(afters map[*afterFunc]struct{}) {
	for a := range afters {
		go a.f()
	}
}

// Finish is called when fn has returned: the context is over, as if the
// deferred cancel of context.WithDeadline had run. Contexts nobody watched
// end lazily, when next asked (Err, Done), with no lock taken now.
func (c *Ctx) Finish() {
	c.Node.Finish() // the timeline drops the entry lazily
	if c.x.Load() != nil {
		c.Cancel(context.Canceled)
	}
}

// String names the context, as the context package's do.
func (c *Ctx) String() string { return "fusebox call context" }
