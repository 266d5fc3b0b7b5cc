package executor

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/fusebox-go/fusebox/breaker"
)

// Shadow mode (Config.Shadow; docs/design.md, "Shadow mode"): a call
// enforce mode would refuse runs outside the bulkhead, with no slot and no
// permit, keeping its timeout, its future and its place among the calls
// Close waits for.

// errShadowed is what reject returns in shadow mode, for admit: run the
// call outside the bulkhead. Never seen by a caller.
var errShadowed = errors.New("executor: shadowed")

// shadowState is the executor's part of shadow mode, in its rareCounts.
type shadowState struct {
	shadow   atomic.Bool // Config.Shadow in force
	shadowed [numRejections]atomic.Uint64
	// allowShadowed counts the calls the open breaker refused in Allow
	// (counted in the breaker's own Rejected too, which Stats corrects).
	allowShadowed atomic.Uint64
}

// shadowOpen counts a call the open breaker refused, in shadow mode.
func (s *shadowState) shadowOpen() error {
	s.allowShadowed.Add(1)
	s.shadowed[RejectedOpen].Add(1)
	return errShadowed
}

func (s *shadowState) shadowedStats() Rejections {
	return Rejections{Open: s.shadowed[RejectedOpen].Load(), Saturated: s.shadowed[RejectedSaturated].Load(),
		QueueFull: s.shadowed[RejectedQueueFull].Load(), Busy: s.shadowed[RejectedBusy].Load()}
}

// runOutside runs a call that shadow mode admits although enforce mode
// refused it: no slot, no permit, its deadline listed with its own kind
// (not old for the stuck criterion, never overdue).
func runOutside[T any](ctx context.Context, ex *Executor, fn func(context.Context) (T, error)) (*call[T], error) {
	if ex.active.Add(1)&closedBit != 0 {
		ex.leave()
		return nil, ex.reject(RejectedClosed)
	}
	c := newCall(ctx, ex, fn, breaker.Permit{})
	c.ctx.Node.Kind = outsideDeadline
	c.start()
	return c, nil
}

// runShadowed runs outside the bulkhead a queued call that waited out its
// queue timeout in shadow mode (see dequeue): it has left the queue, its
// permit was given back, and it starts now, without a slot.
func (c *call[T]) runShadowed() {
	c.permit = breaker.Permit{}
	c.ctx.Node.Kind = outsideDeadline
	c.start()
}

// outside reports whether c runs outside the bulkhead (shadow mode).
func (c *call[T]) outside() bool { return c.ctx.Node.Kind == outsideDeadline }

// overdueUnit is what c adds to the overdue count when it times out: 1,
// or 0 for a call outside the bulkhead, which holds no slot and must not
// make the bulkhead look stuck.
func (c *call[T]) overdueUnit() int64 {
	if c.outside() {
		return 0
	}
	return 1
}
