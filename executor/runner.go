package executor

import (
	"runtime/debug"
	"sync/atomic"

	"github.com/fusebox-go/fusebox/breaker"
)

// runOn hands c to the user's Runner. A Runner that panics or ends the
// goroutine (runtime.Goexit) refuses the call with a *breaker.PanicError
// naming it, so that its slot, active count and future are not lost. The
// task runs the call at most once whatever the Runner does with it: a call
// finished twice would give its slot back twice. docs/design.md, "Where
// user code runs", has the cases.
func runOn[T any](r Runner, c *call[T]) (err error) {
	t := &runnerTask[T]{c: c}
	returned := false
	defer func() {
		if v := recover(); v != nil {
			err = &breaker.PanicError{Callback: "GroupConfig.Runner.Go", Value: v, Stack: debug.Stack()}
		}
		if err != nil && !t.claim() {
			err = nil // it ran (or runs) all the same: its run finishes it
		}
		if err == nil && !returned && t.claim() {
			c.ctx.ex.counts().panics.Add(1)
			var zero T
			c.finish(zero, &breaker.PanicError{Callback: "GroupConfig.Runner.Go", Value: errCallbackGoexit}, skipped)
		}
	}()
	err = r.Go(t.run)
	returned = true
	return err
}

// runnerTask is a call handed to a Runner: whoever claims it first, its
// run or the refusal of it, finishes the call.
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
