package executor

import (
	"context"
	"reflect"
	"sync"
	"sync/atomic"
	"time"
)

// callCtx is the context a protected function receives. It is embedded in
// the call (no allocation) and behaves exactly like a context derived from
// the caller's with context.WithDeadline: Deadline is the earlier of the
// caller's deadline and the invocation deadline; Done closes and Err turns
// non-nil together, when that deadline passes (the executor's timeline
// fires) or the caller's context ends; Value reads the caller's values.
//
// What it saves is paid for lazily: the done channel is made only if the
// function asks for it, and the caller's context is watched (one
// context.AfterFunc) only then, since a function that never looks at Done
// learns about cancellation from Err, which checks the caller's context
// itself.
type callCtx struct {
	parent   context.Context
	epoch    *time.Time // the executor's
	deadline int64      // ns since epoch

	mu       sync.Mutex
	done     chan struct{}
	err      error
	w        atomic.Pointer[watch] // made (under mu) only when the parent is watched or AfterFunc is used
	finished atomic.Bool           // the function has returned: watching is over
}

// watch is the rarely needed part of a callCtx, guarded by its mu.
type watch struct {
	unwatch func() bool // stops watching parent; nil while not watching
	afters  map[*afterFunc]struct{}
}

// watchState returns the watch, making it. Called with mu held.
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
	return c.epoch.Add(time.Duration(c.deadline)), true
}

func (c *callCtx) Value(key any) any {
	v := c.parent.Value(key)
	// The context package finds a parent's cancelCtx through Value (with a
	// private *int key) to share its cancellation and its cause. This
	// context ends on its own deadline too, so it must not be mistaken for
	// its parent's: context.Cause then falls back to Err, and children
	// register through AfterFunc below. No other key is affected.
	if _, ok := key.(*int); ok && v != nil && reflect.TypeOf(v).String() == "*context.cancelCtx" {
		return nil
	}
	return v
}

func (c *callCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		if c.err != nil {
			return closedChan
		}
		c.done = make(chan struct{})
		c.watchLocked()
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
	// Not watching the parent (nobody asked for Done): look now, and end
	// this context with it so that Done and Err agree from here on.
	if err := c.parent.Err(); err != nil {
		c.cancel(err)
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
	c.watchLocked()
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		_, ok := w.afters[a]
		delete(w.afters, a)
		return ok
	}
}

// watchLocked starts following the parent's cancellation, once.
func (c *callCtx) watchLocked() {
	if c.parent.Done() == nil {
		return
	}
	// Publish w before looking at finished; finish sets finished before
	// looking at w. With sequentially consistent atomics at least one of
	// the two sees the other, so a watch is never left registered after
	// the call is over.
	w := c.watchState()
	if w.unwatch != nil || c.finished.Load() {
		return
	}
	parent := c.parent
	w.unwatch = context.AfterFunc(parent, func() { c.cancel(parent.Err()) })
}

// cancel ends the context with err (DeadlineExceeded at the invocation
// deadline, the parent's error when it ends). The first cause wins.
func (c *callCtx) cancel(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	if c.done != nil {
		close(c.done)
	}
	var afters map[*afterFunc]struct{}
	if w := c.w.Load(); w != nil {
		afters, w.afters = w.afters, nil
	}
	c.mu.Unlock()
	for a := range afters {
		go a.f()
	}
}

// finish is called when the function has returned: the parent need not be
// watched any longer. The context keeps its state for anyone holding it.
// The common case, a function that never asked for Done, takes no lock.
func (c *callCtx) finish() {
	c.finished.Store(true)
	w := c.w.Load()
	if w == nil {
		return
	}
	c.mu.Lock()
	unwatch := w.unwatch
	w.unwatch = nil
	c.mu.Unlock()
	if unwatch != nil {
		unwatch()
	}
}

func (c *callCtx) String() string { return "fusebox call context" }
