package executor

import (
	"context"
	"math"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/internal/validate"
	"github.com/fusebox-go/fusebox/priority"
)

// Priorities: how an executor with a critical share (Config.CriticalShare)
// divides its slots (docs/inbound.md has the table). A refusal for a
// share is a busy one; the counts are read without a lock, so the calls
// admitted at the very moment of a race may pass a limit.

// maxCriticalShare bounds Config.CriticalShare: a default call always
// keeps some of the bulkhead.
const maxCriticalShare = 0.9

// sharePerMille is the critical share as executors store it: 0 is off.
func sharePerMille(ck *validate.Checker, s float64) uint32 {
	if math.IsNaN(s) || s < 0 || s > maxCriticalShare {
		ck.Bad("CriticalShare must be in [0, %v], got %v", maxCriticalShare, s)
		return 0
	}
	if s == 0 {
		return 0
	}
	return max(uint32(math.Round(s*1000)), 1)
}

// limits returns the slots a default call and a sheddable call may find
// held and still be admitted (below which they are).
func limits(size int, perMille uint32) (dflt, shed int) {
	reserve := min((size*int(perMille)+999)/1000, size-1)
	return size - reserve, max((size-reserve)/2, 1)
}

// overShare reports whether the call of ctx, admitted by the breaker with
// p, must be refused for its priority. Without a critical share it is one
// load, inlined.
func (ex *Executor) overShare(ctx context.Context, p breaker.Permit) bool {
	s := ex.shares.Load()
	return s != 0 && ex.overShareOf(ctx, s, p)
}

func (ex *Executor) overShareOf(ctx context.Context, perMille uint32, p breaker.Permit) bool {
	if p.Probe() {
		return false
	}
	bs := ex.bh.Stats()
	inUse, size := bs.InUse, bs.Slots
	if inUse >= size && bs.QueueCap == 0 {
		return false // full: busy or stuck, as for any call
	}
	// With a queue, the shares hold for the queue too: a sheddable call
	// that found every slot held must not wait its turn for the slots
	// critical calls are promised.
	dflt, shed := limits(size, perMille)
	if inUse < shed {
		return false
	}
	switch priority.From(ctx) {
	case priority.Critical:
		return false
	case priority.Default:
		return inUse >= dflt
	}
	return true
}

// countRefused counts a refusal of a call of priority p (Stats.
// RejectedByPriority). Submit and Lease call it for the priorities other
// than Default, which are not counted: they are the rest of the total.
func countRefused(ex *Executor, p priority.Priority, err error) {
	if _, ok := err.(*RejectedError); ok && ex != nil {
		ex.counts().byPriority[p].Add(1)
	}
}

// rejectedByPriority splits the total of the rejections by priority.
func (rc *rareCounts) rejectedByPriority(total uint64) (by [priority.Levels]uint64) {
	by[priority.Critical] = rc.byPriority[priority.Critical].Load()
	by[priority.Sheddable] = rc.byPriority[priority.Sheddable].Load()
	by[priority.Default] = total - min(total, by[priority.Critical]+by[priority.Sheddable])
	return by
}
