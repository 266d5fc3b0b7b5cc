package breaker

import (
	"fmt"
	"runtime/debug"
)

// PanicError is a panic recovered from user code that fusebox runs, the
// one type for all of them, the executor's and the adapters' included. The
// breaker recovers its callbacks: Config.Classify (or an error's own Unwrap
// or Is method reached by DefaultClassify), a KindRule's Match and
// Config.ReadyToTrip; it stays consistent, and the call counts as a
// failure (matching no ErrorKinds rule when Match panicked; as its own
// outcome, without a trip by that rule, when ReadyToTrip panicked). The executor recovers a call's function and
// reports the breaker's callbacks as its own.
type PanicError struct {
	// Callback names the code that panicked: "Classify",
	// "ErrorKinds[0].Match (name)" or "ReadyToTrip" from the breaker; "fn" for a call's
	// function, "Breaker.Classify" and the like, or the name an adapter
	// such as fusehttp gives, from the executor.
	Callback string
	Value    any    // what was passed to panic
	Stack    []byte // the panicking goroutine's stack
}

func newPanicError(callback string, v any) *PanicError {
	return &PanicError{Callback: callback, Value: v, Stack: debug.Stack()}
}

// Error names the callback that panicked, unless it was a call's own
// function, and includes the panic value; the stack is in Stack.
func (e *PanicError) Error() string {
	if e.Callback == "" || e.Callback == "fn" {
		return fmt.Sprintf("fusebox: call panicked: %v", e.Value)
	}
	return fmt.Sprintf("fusebox: %s panicked: %v", e.Callback, e.Value)
}

// Unwrap returns the panic value if it is an error (panic(err)), else nil.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}
