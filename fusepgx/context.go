package fusepgx

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fusebox-go/fusebox/executor"
)

// driverContext is the context pgx gets for a call admitted under l: the
// lease's context, which ends at the invocation deadline, or the caller's
// own ctx when it is sure to end at or before that deadline (endsBy): it
// ends the call at the same moment, and pgx watches a context that exists
// already instead of one made for the call. What the caller's context
// does not carry is the executor's Close giving up on the call: such a
// call runs on until its caller's deadline, keeping its slot.
func driverContext(ctx context.Context, l *executor.Lease) context.Context {
	lctx := l.Context()
	if d, _ := lctx.Deadline(); endsBy(ctx, d) {
		return ctx
	}
	return lctx
}

// endsBy reports whether ctx ends by d: its deadline is at or before d,
// and it can end (a context of a user's own type may report a deadline and
// have no Done channel). The deadline is compared first: Done makes a
// context.WithTimeout's channel, which a context not handed over may not
// need.
func endsBy(ctx context.Context, d time.Time) bool {
	cd, ok := ctx.Deadline()
	return ok && !cd.After(d) && ctx.Done() != nil
}

// callerErr is err as the caller sees it: wrapped in executor.ErrTimeout
// when it is a deadline, the deadline of l (the call's lease, or a
// transaction's) has passed, and the caller's context ctx has neither
// ended nor a deadline of its own as early. It must run before the lease
// is done, since Done ends the lease's context.
func (s *shared) callerErr(ctx context.Context, l *executor.Lease, err error) error {
	if err == nil || errors.Is(err, executor.ErrTimeout) || ctx.Err() != nil || !timedOut(err) {
		return err
	}
	lctx := l.Context()
	d, _ := lctx.Deadline()
	if lctx.Err() == nil && time.Now().Before(d) {
		return err // a deadline of pgx's own
	}
	if cd, ok := ctx.Deadline(); ok && !cd.After(d) {
		return err // the caller's own deadline
	}
	return fmt.Errorf("%w: %w", executor.ErrTimeout, err)
}

// timedOut reports whether err says a deadline ended the work: pgx returns
// context.DeadlineExceeded, or a net.Error with Timeout() true when the
// deadline it set on the connection cut a read.
func timedOut(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}
