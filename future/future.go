package future

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/fusebox-go/fusebox/internal/ilist"
)

// ErrNoFutures is returned by [Any] and [First] when they are given no
// futures: there is no value to return and nothing that could fail.
var ErrNoFutures = errors.New("future: no futures")

// errNilContext is the error of a wait given a nil context.
var errNilContext = errors.New("future: a wait with a nil context (use context.Background())")

// errNilFuture is what Await returns on a nil *Future.
var errNilFuture = errors.New("future: Await on a nil *Future")

// Bits of Future.state. A future moves pending (0) → completing → done
// exactly once. Before done, stateChan and stateWaiters may be set; each is
// set only under mu, and only by a CAS that fails once stateDone is set, so
// that the completer's Or(stateDone) learns in one step whom to wake.
const (
	// stateCompleting: one Complete call won the race and is writing the
	// result. Later completers see it and give up; readers ignore it.
	stateCompleting uint32 = 1 << iota
	// stateDone: the result is written. Whoever observes this bit with an
	// atomic load may read val and err without a lock.
	stateDone
	// stateChan: ch holds the done channel, written before the CAS that
	// set this bit and never again, so whoever observes the bit may read
	// ch without a lock. Complete closes it.
	stateChan
	// stateWaiters: waiters may be non-empty; Complete must take mu to
	// notify them.
	stateWaiters
	// stateSleeper: a goroutine waits on sleep, whose count it raised;
	// Complete lowers it.
	stateSleeper
)

// closedChan is what Done returns for a future that completed before anyone
// asked for a channel: a completed future needs no channel of its own.
var closedChan = func() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}()

// Future is a value of type T, with an error, that is completed exactly once
// by its [Promise]. Await it with a context; the context only bounds the
// wait and never affects the producer.
//
// A Future is safe for concurrent use by any number of goroutines. Use it by
// pointer: a Future must not be copied (go vet's copylocks check reports
// copies). The zero Future is a valid future that nobody can complete: Await
// on it waits until its context ends. Futures come from a [Promise] (its
// zero value is ready: new(future.Promise[T])), [Ready] and [Failed]. A nil
// *Future is done: Await returns an error at once, and Done a closed
// channel.
type Future[T any] struct {
	// state holds the state* bits. Every lock-free read of another field
	// is justified by a bit observed in state first.
	state atomic.Uint32

	// mu serializes the creation of ch and guards waiters.
	mu sync.Mutex
	// ch is created on demand by Done (Await's slow path calls Done),
	// published by stateChan and closed by Complete. It stays nil for
	// futures nobody blocked on.
	ch chan struct{}
	// waiters are the fan-out helpers watching this future (see fanout.go).
	waiters ilist.List[waiter, *waiter]
	// sleep lets one Await with a context that never ends block without
	// a channel: it adds one to sleep, publishes stateSleeper and waits;
	// Complete calls Done. Its zero value is ready, so this costs no
	// allocation, where a channel costs one; and a goroutine waiting on it
	// is durably blocked in a testing/synctest bubble, as on a channel.
	sleep sync.WaitGroup

	// val and err are written once by the winning completer before it sets
	// stateDone, and never again.
	val T
	err error
}

// Ready returns a future already completed with v and a nil error.
// It costs one allocation.
func Ready[T any](v T) *Future[T] {
	f := &Future[T]{val: v}
	// Not yet shared with anyone, so ordering is not a concern here; the
	// caller publishes f by whatever means it hands the pointer over.
	f.state.Store(stateDone)
	return f
}

// Failed returns a future already completed with err and the zero value of
// T. Failed(nil) is the same as Ready of the zero value.
// It costs one allocation.
func Failed[T any](err error) *Future[T] {
	f := &Future[T]{err: err}
	f.state.Store(stateDone)
	return f
}

// Await returns the future's value and error once it is complete, or the
// zero value and ctx.Err() if ctx ends first. Ending ctx stops only this
// wait: the producer goes on and may still complete the future, and a later
// Await sees that result. A future that is already complete returns its
// result at once, without looking at ctx, even if ctx has ended. To look
// without waiting, select on [Future.Done] first.
func (f *Future[T]) Await(ctx context.Context) (T, error) {
	if f == nil {
		var zero T
		return zero, errNilFuture
	}
	// Fast path: one atomic load. It observes the completer's Or(stateDone),
	// which happens after val and err were written, so reading them is safe.
	if f.state.Load()&stateDone != 0 {
		return f.val, f.err
	}
	if ctx == nil {
		var zero T
		return zero, errNilContext
	}
	// A context that has already ended returns before we create a channel.
	if err := ctx.Err(); err != nil {
		var zero T
		return zero, err
	}
	done := ctx.Done()
	if done == nil {
		// A context that can never end (Background, WithoutCancel): wait
		// without a select, and without a channel if we are the first.
		f.sleepUntilDone()
		return f.val, f.err
	}
	select {
	case <-f.Done():
		// Complete closes ch only after setting stateDone; the close
		// happens before this receive, so val and err are visible.
	case <-done:
		// Both may be ready at once and select picks at random; prefer the
		// result so that a completed future always answers the same way.
		if f.state.Load()&stateDone == 0 {
			var zero T
			return zero, ctx.Err()
		}
	}
	return f.val, f.err
}

// sleepUntilDone blocks until the future is complete. The first goroutine
// to wait this way waits on sleep (no allocation); any other one receives
// from Done's channel. Either way the completer's writes happen before the
// return: Complete sets stateDone before it calls sleep.Done or closes ch.
//
// A future awaited this way outside a synctest bubble must not be
// completed inside one (the WaitGroup would belong to two worlds); a
// channel has the mirror restriction.
func (f *Future[T]) sleepUntilDone() {
	f.mu.Lock()
	if f.state.Load()&stateSleeper != 0 {
		f.mu.Unlock()
		<-f.Done()
		return
	}
	f.sleep.Add(1)
	if !f.setLocked(stateSleeper) {
		f.sleep.Done()
		f.mu.Unlock()
		return // completed meanwhile
	}
	f.mu.Unlock()
	f.sleep.Wait() // until Complete calls Done
}

// Done returns a channel that is closed once the future is complete, for
// use in select statements. Every call on one future returns a channel that
// closes at the same moment; calling Done on a future that is already
// complete allocates nothing.
func (f *Future[T]) Done() <-chan struct{} {
	if f == nil {
		return closedChan
	}
	// Both fast paths are lock-free. If stateChan is set, ch was written
	// before the CAS that set it, and our load observes that CAS.
	s := f.state.Load()
	if s&stateChan != 0 {
		return f.ch
	}
	// Done without a channel: nobody will ever create one (that needs
	// stateDone clear), so the shared closed channel will do.
	if s&stateDone != 0 {
		return closedChan
	}
	return f.makeChan()
}

// makeChan is Done's slow path: the first caller on a pending future
// creates the channel; callers racing with it get the same one.
func (f *Future[T]) makeChan() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	// Under mu, stateChan cannot appear behind our back, but stateDone can.
	if f.state.Load()&stateChan != 0 {
		return f.ch
	}
	// Write ch first, then publish it with the CAS. A reader that sees
	// stateChan, or the completer whose Or(stateDone) returns it, is
	// therefore ordered after this write.
	f.ch = make(chan struct{})
	if !f.setLocked(stateChan) {
		// Completed meanwhile: nobody will read ch, so drop it.
		f.ch = nil
		return closedChan
	}
	return f.ch
}

// setLocked sets bit (stateChan or stateWaiters) so that a later Complete
// wakes what the caller publishes under mu. It reports false, and sets
// nothing, if the future is already done: then the caller must not wait.
// f.mu must be held.
func (f *Future[T]) setLocked(bit uint32) bool {
	for {
		s := f.state.Load()
		if s&stateDone != 0 {
			return false
		}
		// The CAS fails if Complete's Or(stateDone) got in first, and we
		// retry and see stateDone; if it succeeds, that Or comes later and
		// returns bit. It may also fail on stateCompleting: retry.
		if s&bit != 0 || f.state.CompareAndSwap(s, s|bit) {
			return true
		}
	}
}

// result returns val and err. The caller must have observed stateDone (an
// atomic load, a closed Done channel or a waiter's notice), which orders
// the completer's writes before this read.
func (f *Future[T]) result() (T, error) {
	return f.val, f.err
}

// isDone reports whether the result may be read with result.
func (f *Future[T]) isDone() bool {
	return f.state.Load()&stateDone != 0
}
