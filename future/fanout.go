package future

import (
	"context"
	"errors"
	"strconv"

	"github.com/fusebox-go/fusebox/internal/ilist"
)

// All waits for every future in fs and returns their values in the order of
// fs. It returns as soon as one of them fails, with that error and a nil
// slice, without waiting for the rest: the first failure in completion order
// wins, not the one with the lowest index (among futures already complete
// when All is called, the lowest index counts as first). If ctx ends while
// a future is still pending, All returns ctx.Err(); an ended ctx does not
// hide results that were complete before All was called. With no futures,
// All returns an empty slice and nil.
//
// All only waits: it does not stop the producers of the other futures. To
// cancel them on the first failure, give them a context from
// [context.WithCancelCause] and cancel it with All's error (see the
// example). All starts no goroutines; a nil in fs is an error.
func All[T any](ctx context.Context, fs ...*Future[T]) ([]T, error) {
	out := make([]T, len(fs))
	var failure error
	err := watch(ctx, fs, func(i int) bool {
		v, err := fs[i].result()
		if err != nil {
			failure = err
			return true
		}
		out[i] = v
		return false
	})
	if err == nil {
		err = failure
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Any returns the value of the first future in fs to succeed, as soon as it
// does. If every future fails, Any returns the zero value and all their
// errors, in the order of fs, joined with [errors.Join]. If ctx ends first,
// it returns ctx.Err(); with no futures, [ErrNoFutures]. Like [All], it does
// not stop the other producers and starts no goroutines; a nil in fs is an
// error.
func Any[T any](ctx context.Context, fs ...*Future[T]) (T, error) {
	var zero T
	if len(fs) == 0 {
		return zero, ErrNoFutures
	}
	var (
		won  = -1
		errs []error // made on the first failure; indexed like fs
	)
	err := watch(ctx, fs, func(i int) bool {
		if _, err := fs[i].result(); err != nil {
			if errs == nil {
				errs = make([]error, len(fs))
			}
			errs[i] = err
			return false
		}
		won = i
		return true
	})
	switch {
	case err != nil:
		return zero, err
	case won >= 0:
		return fs[won].result()
	default:
		// Every future failed, so errs is full; Join keeps the fs order.
		return zero, errors.Join(errs...)
	}
}

// First returns the result, success or failure, of the first future in fs
// to complete (the lowest index among those already complete when First is
// called). If ctx ends first, it returns ctx.Err(); with no futures,
// [ErrNoFutures]. Like [All], it does not stop the other producers and
// starts no goroutines; a nil in fs is an error.
func First[T any](ctx context.Context, fs ...*Future[T]) (T, error) {
	if len(fs) == 0 {
		var zero T
		return zero, ErrNoFutures
	}
	first := -1
	if err := watch(ctx, fs, func(i int) bool {
		first = i
		return true
	}); err != nil {
		var zero T
		return zero, err
	}
	return fs[first].result()
}

// Awaitable is a future of any value type, for Wait: every *Future[T] is
// one, and nothing else.
type Awaitable interface {
	isNil() bool
	isDone() bool
	addWaiter(w *waiter) bool
	removeWaiter(w *waiter)
	failure() error
}

// Wait waits for every future in fs, whatever their value types, and
// returns nil once all have succeeded. It returns as soon as one fails,
// with that error, or with ctx.Err() if ctx ends first; then read each
// value with Await, which returns at once. Like [All], it does not stop
// the other producers and starts no goroutines; a nil in fs is an error.
func Wait(ctx context.Context, fs ...Awaitable) error {
	var failure error
	err := watch(ctx, fs, func(i int) bool {
		failure = fs[i].failure()
		return failure != nil
	})
	if err == nil {
		err = failure
	}
	return err
}

func (f *Future[T]) isNil() bool { return f == nil }

func (f *Future[T]) failure() error {
	_, err := f.result()
	return err
}

// watch calls visit(i) for each future fs[i] once it is complete, in the
// order in which they complete, until visit returns true or every future
// has been visited; it returns ctx.Err() if ctx ends before that. visit may
// read fs[i].result(). Futures already complete are visited first, by
// index, without allocating; then watch registers a waiter on each pending
// future and blocks on one channel shared by them all. It starts no
// goroutine, and on return it leaves no waiter behind.
func watch[F Awaitable](ctx context.Context, fs []F, visit func(i int) bool) error {
	// A nil future is a bug in the caller; report it whatever the others'
	// states, not only when the scan below happens to reach it.
	for i, f := range fs {
		if any(f) == nil || f.isNil() {
			return errors.New("future: nil *Future at index " + strconv.Itoa(i))
		}
	}

	ws, stop := visitDone(fs, visit)
	if stop || len(ws) == 0 {
		return nil
	}
	if ctx == nil {
		return errNilContext
	}
	if err := ctx.Err(); err != nil {
		return err
	}

	// Pass 2: register. Each waiter sends its index at most once, either
	// from Complete or from here when the future completed since pass 1,
	// so a buffer of len(ws) means no send ever blocks.
	wake := make(chan int, len(ws))
	defer func() {
		for k := range ws {
			fs[ws[k].idx].removeWaiter(&ws[k])
		}
	}()
	for k := range ws {
		w := &ws[k]
		w.wake = wake
		if !fs[w.idx].addWaiter(w) {
			wake <- w.idx
		}
	}

	// Every receive is one completion, so len(ws) receives visit them all.
	// The index comes through a channel after Complete published the
	// result (or after addWaiter observed stateDone), so visit may read it.
	for range len(ws) {
		select {
		case i := <-wake:
			if visit(i) {
				return nil
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// visitDone is watch's first pass: it visits the futures already complete,
// by index, and returns a waiter for each pending one, or stop if visit
// asked to stop. The slice gets room for every remaining future at once, so
// it never moves and pointers into it stay valid once registered.
func visitDone[F Awaitable](fs []F, visit func(i int) bool) (ws []waiter, stop bool) {
	for i, f := range fs {
		if f.isDone() {
			if visit(i) {
				return nil, true
			}
			continue
		}
		if ws == nil {
			ws = make([]waiter, 0, len(fs)-i)
		}
		ws = append(ws, waiter{idx: i})
	}
	return ws, false
}

// waiter is one helper call's interest in one future: Complete sends idx on
// wake when the future completes. A helper call allocates all its waiters
// in one slice and one wake channel with room for all of them.
type waiter struct {
	links ilist.Links[waiter] // on a future's list; guarded by its mu
	wake  chan<- int
	idx   int
}

// Links returns w's links in a future's list of waiters, for package ilist.
func (w *waiter) Links() *ilist.Links[waiter] { return &w.links }

// notifyLocked tells w's helper that its future completed; Complete has
// just taken w off the list. It never blocks: wake has room for every
// waiter sharing it, and each sends at most once, because only addWaiter
// puts a waiter on a list. The future's mu must be held.
func (w *waiter) notifyLocked() {
	w.wake <- w.idx
}

// addWaiter puts w on f's list so that Complete notifies it. It reports
// false, and does nothing, if f is already done; the caller must then treat
// f as complete itself.
func (f *Future[T]) addWaiter(w *waiter) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.setLocked(stateWaiters) {
		return false
	}
	f.waiters.PushBack(w)
	return true
}

// removeWaiter takes w off f's list if it is still there, so that a helper
// that returns early leaves nothing behind on a future that may stay
// pending for a long time. stateWaiters stays set; it only costs the
// eventual Complete one uncontended lock.
func (f *Future[T]) removeWaiter(w *waiter) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ilist.Linked(w) {
		f.waiters.Remove(w)
	}
}
