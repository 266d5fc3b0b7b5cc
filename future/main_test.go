package future

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// TestMain fails the package if any test, example or benchmark leaves a
// goroutine running.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// Errors the tests complete futures with.
var (
	errA = errors.New("a failed")
	errB = errors.New("b failed")
	errC = errors.New("c failed")
)

// step completes promise i with v and err.
type step struct {
	i   int
	v   int
	err error
}

// promises returns n pending promises and their futures, index for index.
func promises(n int) ([]*Promise[int], []*Future[int]) {
	ps := make([]*Promise[int], n)
	fs := make([]*Future[int], n)
	for i := range ps {
		ps[i] = new(Promise[int])
		fs[i] = ps[i].Future()
	}
	return ps, fs
}

// outcome is what a call that returns a value and an error returned.
type outcome[R any] struct {
	v   R
	err error
}

// start runs call on a new goroutine and returns a channel that receives its
// outcome. Inside a synctest bubble, synctest.Wait then tells whether the
// call is blocked.
func start[R any](call func() (R, error)) <-chan outcome[R] {
	out := make(chan outcome[R], 1)
	go func() {
		v, err := call()
		out <- outcome[R]{v, err}
	}()
	return out
}

// poll reports the outcome if the call has returned. Call it after
// synctest.Wait, when a call that has not returned is durably blocked.
func poll[R any](out <-chan outcome[R]) (outcome[R], bool) {
	select {
	case o := <-out:
		return o, true
	default:
		return outcome[R]{}, false
	}
}

// fanOutCase drives a fan-out helper over n promises: the before steps are
// applied before the helper is called, the after steps one by one while it
// runs. wantAt is the number of after steps it takes for the helper to
// return (0: it returns without blocking).
type fanOutCase struct {
	name   string
	n      int
	before []step
	after  []step
	wantAt int
}

// fanOutResult is what runFanOut saw: the helper's outcome, and after how
// many after steps it returned.
type fanOutResult[R any] struct {
	outcome[R]
	at int
}

// runFanOut runs c against call inside a synctest bubble. It fails the test
// if the helper has not returned once every step is applied.
func runFanOut[R any](t *testing.T, c fanOutCase, call func(context.Context, ...*Future[int]) (R, error)) fanOutResult[R] {
	t.Helper()
	var res fanOutResult[R]
	synctest.Test(t, func(t *testing.T) {
		ps, fs := promises(c.n)
		for _, s := range c.before {
			require.True(t, ps[s.i].Complete(s.v, s.err), "before step %+v: got false, want true", s)
		}
		// If the helper wrongly stays blocked, the test fails below; the
		// deferred cancel then lets it return, so the bubble can end.
		ctx, cancel := context.WithCancel(t.Context())
		out := start(func() (R, error) { return call(ctx, fs...) })
		defer func() {
			cancel()
			synctest.Wait()
		}()
		synctest.Wait()
		o, done := poll(out)
		for at, s := range c.after {
			if done {
				break
			}
			require.True(t, ps[s.i].Complete(s.v, s.err), "after step %+v: got false, want true", s)
			synctest.Wait()
			res.at = at + 1
			o, done = poll(out)
		}
		require.True(t, done, "helper still blocked after every step")
		res.outcome = o
		// Nothing the helper registered may stay behind on any future.
		for i, f := range fs {
			f.mu.Lock()
			require.Nil(t, f.waiters.Front(), "future %d: got waiters left behind, want none", i)
			f.mu.Unlock()
		}
	})
	return res
}
