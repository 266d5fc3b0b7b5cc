package executor

import (
	"context"
	"errors"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
)

// DoOr is Do that returns fallback(ctx, err), outside the bulkhead, when
// the call is refused or times out; fn's own errors pass as they are.
func DoOr[T any](ctx context.Context, ex *Executor, fn func(context.Context) (T, error),
	fallback func(context.Context, error) (T, error)) (T, error) {
	v, err := Do(ctx, ex, fn)
	if fallsBack(ctx, err) && fallback != nil {
		return fallback(ctx, err)
	}
	return v, err
}

// DoInOr is DoOr on the executor of the supplier name in g; a failed
// lookup is returned without the fallback.
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
