package policy

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Budget caps the extra calls a policy adds to a supplier (retries, or
// hedges) to a share of the calls its callers made recently, plus a small
// floor, so that a supplier that fails, or slows down, never sees its load
// multiplied by the policies meant to ride out its trouble.
//
// "Recently" is an exponential decay with time constant Window: a call
// counts fully now, e^-1 of itself a Window later. A policy keeps one budget
// per supplier, computed from the clock when a call uses it: no goroutine,
// no timer. The zero value is a budget of 10 % for retries (5 % for
// hedges), a floor of 10 extra calls per Window, over 10 s.
type Budget struct {
	// Ratio is the share of the callers' recent calls that extra calls may
	// add, in (0, 1]. 0: 0.1 for a Retrier, 0.05 for a Hedger.
	Ratio float64
	// Floor is how many extra calls per Window are allowed whatever the
	// traffic, so that a quiet supplier can still be retried. 0: 10;
	// negative: none.
	Floor int
	// Window is the time constant of "recent". 0: 10 s.
	Window time.Duration
	// Unlimited turns the budget off: every extra call the policy wants is
	// made. This is the naive policy that turns a failing supplier's
	// trouble into a storm; it is here for comparisons and tests.
	Unlimited bool
}

// withDefaults validates b and fills in its zero values; field names the
// budget in errors ("Budget" or "Hedge.Budget").
func (b Budget) withDefaults(field string, ratio float64) (Budget, error) {
	switch {
	case b.Ratio < 0 || b.Ratio > 1 || math.IsNaN(b.Ratio):
		return b, fmt.Errorf("policy: %s.Ratio must be in [0, 1] (0: %v), got %v", field, ratio, b.Ratio)
	case b.Window < 0:
		return b, fmt.Errorf("policy: %s.Window must not be negative (0: 10s), got %v", field, b.Window)
	}
	if b.Ratio == 0 {
		b.Ratio = ratio
	}
	switch {
	case b.Floor == 0:
		b.Floor = 10
	case b.Floor < 0:
		b.Floor = 0
	}
	if b.Window == 0 {
		b.Window = 10 * time.Second
	}
	return b, nil
}

// errNoBudget is what spend reports when the budget refuses.
var errNoBudget = errors.New("policy: budget exhausted")

// budget is one supplier's account. The callers' calls are counted with
// one atomic add each (total), so that the call path takes no lock and
// reads no clock; the decayed counts, calls and extra, are brought up to
// date when an extra call asks for budget, under a mutex held for a few
// arithmetic operations, which keeps the check and the spend one step under
// concurrency.
//
// An extra call is allowed while extra+1 <= Ratio×calls + Floor, so that in
// steady traffic of rate r the extra calls stay under Ratio×r +
// Floor/Window per second.
type budget struct {
	cfg   Budget
	epoch time.Time
	total atomic.Uint64 // callers' calls ever

	mu      sync.Mutex
	at      time.Duration // since epoch: when calls and extra were decayed last
	counted uint64        // total as of at
	calls   float64       // decayed count of the callers' calls
	extra   float64       // decayed count of the extra calls made
}

func newBudget(cfg Budget) *budget { return &budget{cfg: cfg, epoch: time.Now()} }

// advanceLocked brings the decayed counts to now. The calls counted since
// the last update are taken as spread evenly over the time since: each
// arrived on average (W/dt)(1 − e^(−dt/W)) of a call ago in decayed terms,
// which is exact for steady traffic and keeps an hour of quiet traffic
// from counting as an hour's worth of calls made just now.
func (b *budget) advanceLocked(now time.Duration) {
	n := b.total.Load()
	fresh := float64(n - b.counted)
	b.counted = n
	dt := now - b.at
	if dt <= 0 {
		b.calls += fresh
		return
	}
	x := float64(dt) / float64(b.cfg.Window)
	f := math.Exp(-x)
	b.calls = b.calls*f + fresh*(1-f)/x
	b.extra *= f
	b.at = now
}

// call counts one call of the callers.
func (b *budget) call() { b.total.Add(1) }

// spend takes one extra call from the budget, or reports errNoBudget.
func (b *budget) spend() error {
	if b.cfg.Unlimited {
		return nil
	}
	now := time.Since(b.epoch)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.advanceLocked(now)
	if b.extra+1 > b.cfg.Ratio*b.calls+float64(b.cfg.Floor) {
		return errNoBudget
	}
	b.extra++
	return nil
}

// refund gives back an extra call that spend allowed but that was not
// made (a hedge the bulkhead refused).
func (b *budget) refund() {
	if b.cfg.Unlimited {
		return
	}
	b.mu.Lock()
	b.extra = max(0, b.extra-1)
	b.mu.Unlock()
}
