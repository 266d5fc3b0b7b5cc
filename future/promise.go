package future

// Promise is the producer side of a [Future]: whoever holds the Promise
// completes the future, once.
//
// The zero Promise is pending and ready to use: new(future.Promise[T])
// makes one, in one allocation that also holds the future, and a Promise
// can live by value inside a larger struct to share its allocation:
//
//	type call[T any] struct {
//		future.Promise[T]
//		fn func(context.Context) (T, error)
//	}
//
// A Promise must not be copied after first use (go vet's copylocks check
// reports copies). Its methods are safe for concurrent use.
type Promise[T any] struct {
	f Future[T]
}

// Future returns the future this promise completes. It is a pointer into p,
// the same on every call, and keeps p alive.
func (p *Promise[T]) Future() *Future[T] {
	if p == nil {
		return nil // done, with an error (see Future)
	}
	return &p.f
}

// Complete completes the future with v and err and wakes everyone awaiting
// it. The first call wins and returns true; every later call, concurrent or
// not, changes nothing and returns false. Awaiters see exactly the winner's
// v and err.
//
// Complete never blocks on awaiters; it costs no allocation. On a nil
// *Promise it does nothing and returns false.
func (p *Promise[T]) Complete(v T, err error) bool {
	return p != nil && p.f.complete(v, err)
}

// complete stores the result if no one else has; see [Promise.Complete].
func (f *Future[T]) complete(v T, err error) bool {
	// Claim the right to write. A CAS loop rather than one CAS from 0,
	// because a waiter may set stateChan or stateWaiters concurrently.
	for {
		s := f.state.Load()
		if s&(stateCompleting|stateDone) != 0 {
			return false
		}
		if f.state.CompareAndSwap(s, s|stateCompleting) {
			break
		}
	}
	// We are the only writer, and no reader looks before stateDone.
	f.val, f.err = v, err
	// Publish: every load that observes stateDone also observes the writes
	// above. Or returns the previous bits, so in the same atomic step we
	// learn whom to wake; after it, nobody can register any more.
	old := f.state.Or(stateDone)
	if old&stateChan != 0 {
		// Or observed the CAS that published ch, so ch is readable
		// without mu; only we close it, once.
		close(f.ch)
	}
	if old&stateSleeper != 0 {
		f.sleep.Done() // wakes the one sleeper
	}
	if old&stateWaiters != 0 {
		// Waiters come and go under mu (a helper that returns early takes
		// its waiters back), so walk the list under mu.
		f.mu.Lock()
		for w := f.waiters.PopFront(); w != nil; w = f.waiters.PopFront() {
			w.notifyLocked()
		}
		f.mu.Unlock()
	}
	return true
}
