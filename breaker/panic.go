package breaker

import (
	"fmt"
	"runtime/debug"
)

// PanicError is a panic recovered from a user callback the breaker calls
// while recording a call's outcome: Config.Classify (or an error's own
// Unwrap or Is method reached by DefaultClassify) or a KindRule's Match.
// The breaker stays consistent: the call counts as a failure (matching no
// ErrorKinds rule when Match panicked).
type PanicError struct {
	Callback string // which callback panicked, e.g. "Classify" or "ErrorKinds[0].Match"
	Value    any    // what was passed to panic
	Stack    []byte // the panicking goroutine's stack
}

func newPanicError(callback string, v any) *PanicError {
	return &PanicError{Callback: callback, Value: v, Stack: debug.Stack()}
}

// Error names the callback and includes the panic value; the stack is in
// Stack.
func (e *PanicError) Error() string {
	return fmt.Sprintf("breaker: %s panicked: %v", e.Callback, e.Value)
}

// Unwrap returns the panic value if it is an error (panic(err)), else nil.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}
