package breaker

import (
	"errors"
	"runtime/debug"
)

// ErrGoexit is the Value of the *PanicError that stands for user code
// that ended its goroutine with runtime.Goexit (as t.FailNow does in a
// test) instead of returning.
var ErrGoexit = errors.New("fusebox: runtime.Goexit instead of a return")

// Guard calls fn, the user code that callback names (as in
// "fusehttp.Transport.Key"), on the calling goroutine and returns its
// results. A panic in fn is returned as a *PanicError with its value and
// stack. A runtime.Goexit in fn cannot be stopped: onGoexit, if not nil,
// is called with a *PanicError whose Value is ErrGoexit, and then the
// goroutine ends. fusebox runs every user callback through Guard.
func Guard[T any](callback string, fn func() (T, error), onGoexit func(error)) (v T, err error) {
	returned := false
	defer func() {
		if returned {
			return
		}
		var zero T
		// recover returns nil only for a Goexit: since Go 1.21 panic(nil)
		// is a *runtime.PanicNilError.
		if p := recover(); p != nil {
			v, err = zero, &PanicError{Callback: callback, Value: p, Stack: debug.Stack()}
			return
		}
		perr := &PanicError{Callback: callback, Value: ErrGoexit, Stack: debug.Stack()}
		v, err = zero, perr
		if onGoexit != nil {
			onGoexit(perr)
		}
	}()
	v, err = fn()
	returned = true
	return v, err
}
