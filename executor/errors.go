package executor

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
)

// A refused call's error matches breaker.ErrOpen, ErrSaturated, ErrBusy or
// ErrClosed.
var (
	// ErrSaturated: stuck calls held every slot; the breaker tripped.
	ErrSaturated = errors.New("executor: saturated")
	// ErrBusy: young calls held every slot; only this call was refused.
	ErrBusy = errors.New("executor: busy")
	// ErrThrottled: Config.Throttle refused the call locally; no failure.
	ErrThrottled = errors.New("executor: throttled")
	// ErrClosed: the executor (or its Group) is closed or closing.
	ErrClosed = errors.New("executor: closed")
	// ErrTimeout matches a call's timeout error, which names the supplier and
	// the timeout and matches context.DeadlineExceeded.
	ErrTimeout error = &timeoutError{msg: "executor: invocation timeout"}
	// ErrQueueTimeout: the call waited too long in the queue and never ran.
	ErrQueueTimeout error = &timeoutError{msg: "executor: timed out waiting in the queue"}
)

// timeoutError is the type of ErrTimeout, ErrQueueTimeout and of the
// timeout errors of each executor (see timeoutErrs).
type timeoutError struct {
	msg string
	d   time.Duration // the invocation timeout the message names
}

func (e *timeoutError) Error() string { return e.msg }
func (e *timeoutError) Timeout() bool { return true }
func (e *timeoutError) Is(target error) bool {
	return target == context.DeadlineExceeded || target == ErrTimeout
}

// Rejection says why Submit refused a call.
type Rejection uint8

// The rejections.
const (
	RejectedOpen      Rejection = iota // the breaker was open (breaker.ErrOpen)
	RejectedSaturated                  // no free slot, no queue, the slots stuck: the breaker tripped (ErrSaturated)
	RejectedQueueFull                  // no free slot, the queue full, the slots stuck: the breaker tripped (ErrSaturated)
	RejectedClosed                     // the executor was closed (ErrClosed)
	RejectedBusy                       // no free slot (nor queue place), but the calls were young: the breaker stayed closed (ErrBusy)
	RejectedThrottled                  // Config.Throttle refused it locally (ErrThrottled)
	numRejections
)

var rejectionNames = [...]string{"open", "saturated", "queue-full", "closed", "busy", "throttled"}

// String returns the reason as the metrics label it: "open", "saturated",
// "queue-full", "closed", "busy" or "throttled".
func (r Rejection) String() string {
	if r < numRejections {
		return rejectionNames[r]
	}
	return fmt.Sprintf("Rejection(%d)", r)
}

// sentinel is the error a rejection unwraps to.
func (r Rejection) sentinel() error {
	switch r {
	case RejectedOpen:
		return breaker.ErrOpen
	case RejectedClosed:
		return ErrClosed
	case RejectedBusy:
		return ErrBusy
	case RejectedThrottled:
		return ErrThrottled
	}
	return ErrSaturated
}

// RejectedError is the error of a refused call; it matches breaker.ErrOpen,
// ErrSaturated, ErrBusy or ErrClosed. The values are shared, so a refusal
// allocates nothing: treat them as read-only.
type RejectedError struct {
	Supplier string
	Reason   Rejection

	br *breaker.Breaker // the supplier's, for RetryAfter
}

// Error names the supplier and the reason, as in
// "fusebox: payments: rejected: open".
func (e *RejectedError) Error() string {
	return fmt.Sprintf("fusebox: %s: rejected: %s", e.Supplier, e.Reason)
}

// Unwrap returns breaker.ErrOpen, ErrSaturated, ErrBusy or ErrClosed.
func (e *RejectedError) Unwrap() error { return e.Reason.sentinel() }

// newPanicError is the error of a call whose function panicked. The panic
// is recovered on the goroutine where it happened, the call counts as a
// failure on the breaker, its future resolves with this error, and the
// process carries on. It is a *breaker.PanicError, the one type for every
// panic fusebox recovers, as for a user callback the executor ran for the
// call.
func newPanicError(v any) *breaker.PanicError {
	return &breaker.PanicError{Callback: "fn", Value: v, Stack: debug.Stack()}
}

// errCallbackGoexit is the Value of the *breaker.PanicError of a call whose
// breaker callback ended its goroutine with runtime.Goexit (as t.FailNow
// does in a test's classifier or listener) instead of returning.
var errCallbackGoexit = errors.New("runtime.Goexit instead of a return")

// breakerCallbacks names the callbacks a call's outcome runs, for a
// *breaker.PanicError that cannot tell which of them ended the goroutine.
const breakerCallbacks = "Breaker.Classify, ErrorKinds[i].Match or OnTransition"

func goexitError() *breaker.PanicError {
	return &breaker.PanicError{Callback: breakerCallbacks, Value: errCallbackGoexit}
}

// fromBreaker turns a panic the breaker recovered from one of its
// callbacks into the *breaker.PanicError the executor reports.
func fromBreaker(err error) *breaker.PanicError {
	bp, ok := err.(*breaker.PanicError)
	if !ok {
		return &breaker.PanicError{Callback: "Breaker", Value: err}
	}
	return &breaker.PanicError{Callback: "Breaker." + bp.Callback, Value: bp.Value, Stack: bp.Stack}
}

// timeoutErrs are the errors a supplier's timed-out calls resolve with,
// made once per executor (and per invocation timeout, which Reconfigure
// may change), so that a timeout allocates nothing, as a rejection does.
type timeoutErrs struct {
	invocation atomic.Pointer[timeoutError] // "invocation timeout after d"
	caller     timeoutError                 // the caller's deadline came first
}

func (t *timeoutErrs) init(supplier string) {
	t.caller.msg = "fusebox: " + supplier + ": invocation timeout at the caller's deadline"
}

// timeoutErr is the error of a call of ex whose deadline at (ns on the
// executor's clock) passed while it ran: the caller's, if it came before
// the invocation timeout, or the invocation timeout in force.
func (ex *Executor) timeoutErr(parent context.Context, at int64) error {
	te := &ex.counts().timeoutErrs
	if d, ok := parent.Deadline(); ok && int64(d.Sub(ex.env.epoch)) == at {
		return &te.caller // start chose the caller's deadline (see call.start)
	}
	d := time.Duration(ex.timeout.Load())
	if e := te.invocation.Load(); e != nil && e.d == d {
		return e
	}
	e := &timeoutError{msg: fmt.Sprintf("fusebox: %s: invocation timeout after %v", ex.name, d), d: d}
	te.invocation.Store(e) // a race makes two equal values; either will do
	return e
}
