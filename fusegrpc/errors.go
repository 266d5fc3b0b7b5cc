package fusegrpc

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// Error is what a call gets when fusebox, not the server, ended it: a
// refusal (breaker open, bulkhead saturated, group closed: Unavailable),
// the executor's invocation timeout (DeadlineExceeded), a bad key or one a
// Strict group does not list (Internal). It is a gRPC status error, so
// status.Code and status.FromError see Code, and it wraps the executor's
// error, so errors.Is(err, breaker.ErrOpen) and errors.As into
// *executor.RejectedError work too.
type Error struct {
	Code codes.Code
	Err  error
}

// Error returns the status message.
func (e *Error) Error() string {
	return fmt.Sprintf("rpc error: code = %s desc = %s", e.code(), e.message())
}

// Unwrap returns the executor's error.
func (e *Error) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// GRPCStatus returns the status the error stands for.
func (e *Error) GRPCStatus() *status.Status { return status.New(e.code(), e.message()) }

// code is Code; a nil *Error (returned as an error, which is then not
// nil) is Unknown, as grpc makes an error whose status it cannot read.
func (e *Error) code() codes.Code {
	if e == nil {
		return codes.Unknown
	}
	return e.Code
}

// message describes the error. An Error built by hand without an Err, or
// a nil *Error, says so rather than panicking in the caller's log line.
func (e *Error) message() string {
	switch {
	case e == nil:
		return "fusegrpc: a nil *Error"
	case e.Err == nil:
		return "fusegrpc: an Error with a nil Err"
	}
	var rm *remote
	if errors.As(e.Err, &rm) {
		return rm.msg
	}
	var rej *executor.RejectedError
	if !errors.As(e.Err, &rej) {
		return e.Err.Error()
	}
	why := "the group is closed"
	switch rej.Reason {
	case executor.RejectedOpen:
		why = "its circuit breaker is open after recent failures; retry after the breaker's reset timeout"
	case executor.RejectedSaturated:
		why = "every slot of its bulkhead is held by stuck calls; its circuit breaker has opened"
	case executor.RejectedQueueFull:
		why = "every slot of its bulkhead is held and its queue is full of stuck calls; its circuit breaker has opened"
	case executor.RejectedBusy:
		why = "every slot of its bulkhead is busy (and its queue full) with calls that should end soon; retry shortly"
	}
	return fmt.Sprintf("fusebox: call to %s refused without being sent (%s): %s", rej.Supplier, rej.Reason, why)
}

// statusOf turns the error of a call that did not return by itself into
// the error its caller gets.
func statusOf(ctx context.Context, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, breaker.ErrOpen), errors.Is(err, executor.ErrSaturated), errors.Is(err, executor.ErrBusy), errors.Is(err, executor.ErrClosed):
		return &Error{Code: codes.Unavailable, Err: err}
	case errors.Is(err, executor.ErrQueueTimeout):
		// Waited for a slot and never ran: like a refusal, nothing was sent.
		return &Error{Code: codes.Unavailable, Err: err}
	case errors.Is(err, executor.ErrUnknownSupplier):
		// A Strict group refused the key: the client's configuration is
		// wrong, and retrying will not help.
		return &Error{Code: codes.Internal, Err: err}
	case errors.Is(err, executor.ErrTimeout):
		return &Error{Code: codes.DeadlineExceeded, Err: err}
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return status.FromContextError(err).Err()
	}
	var pe *breaker.PanicError
	if errors.As(err, &pe) {
		return &Error{Code: codes.Internal, Err: err}
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	return &Error{Code: codes.Unknown, Err: err}
}
