package executor

import (
	"context"
	"errors"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
)

// DoOr is Do with a fallback: when the call is refused or times out, that
// is when its error matches breaker.ErrOpen, ErrSaturated (a full queue
// too), ErrBusy or ErrTimeout (ErrQueueTimeout too), it returns fallback(ctx, err)
// instead: a cached value, a default, a degraded answer. Every other error is
// returned as it is: fn's own (the supplier answered; a fallback would hide
// its answer), ErrClosed (the service is shutting down) and the caller's
// cancellation (nobody waits for a fallback). fallback runs on the
// caller's goroutine, outside the executor: it holds no slot and its
// outcome is not recorded on the breaker.
//
// # Retries
//
// Retry around DoOr or Do, never inside fn: a retry inside fn holds the
// slot for every attempt and multiplies the load on a supplier that is
// already failing, which is the outage the bulkhead is there to contain.
// Around the call:
//   - never retry breaker.ErrOpen (the breaker has just said the supplier
//     is down; a retry only burns a rejection) nor ErrClosed;
//   - retry ErrBusy and ErrTimeout at most once or twice, with
//     back-off and jitter, and only for idempotent calls;
//   - keep a retry budget, e.g. retries at most 10% of calls, so that
//     retries cannot double the traffic of an outage;
//   - stop when the caller's context is done.
//
// Example_retry in this package shows such a loop.
func DoOr[T any](ctx context.Context, ex *Executor, fn func(context.Context) (T, error),
	fallback func(context.Context, error) (T, error)) (T, error) {
	v, err := Do(ctx, ex, fn)
	if fallsBack(ctx, err) && fallback != nil {
		return fallback(ctx, err)
	}
	return v, err
}

// DoInOr is DoOr on the executor of the supplier name in g (see DoIn). A
// lookup that fails (the group is closed, or Strict and the name unknown)
// is returned as it is, without the fallback.
func DoInOr[T any](ctx context.Context, g *Group, name string, fn func(context.Context) (T, error),
	fallback func(context.Context, error) (T, error)) (T, error) {
	v, err := DoIn(ctx, g, name, fn)
	if fallsBack(ctx, err) && fallback != nil {
		return fallback(ctx, err)
	}
	return v, err
}

// fallsBack reports whether err is one DoOr answers with the fallback: a
// refusal or a timeout, and not the caller's own deadline.
func fallsBack(ctx context.Context, err error) bool {
	switch {
	case err == nil, errors.Is(err, ErrClosed):
		return false
	case errors.Is(err, breaker.ErrOpen), errors.Is(err, ErrSaturated), errors.Is(err, ErrBusy):
		return true
	}
	// The caller's own deadline also resolves the call with ErrTimeout:
	// nobody waits for a fallback then. The clock, not ctx.Err, says so:
	// the executor's timer may resolve the call a moment before the
	// context's own timer marks it done.
	if !errors.Is(err, ErrTimeout) || ctx.Err() != nil {
		return false
	}
	d, ok := ctx.Deadline()
	return !ok || time.Now().Before(d)
}
