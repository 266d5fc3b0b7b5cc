package policy

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/future"
)

// HedgeConfig configures a Hedger. The zero value hedges a call once it has
// run longer than the supplier's recent p95, within a budget of 5 % of the
// supplier's recent calls (plus 10 per 10 s).
type HedgeConfig struct {
	// Delay is how long the first attempt runs alone before the hedge
	// starts. 0: the Quantile of the supplier's recent successful calls
	// (executor.Executor.Latency), read at most once per DelayRefresh; a
	// supplier without history yet (fewer than 20 successes) is not
	// hedged.
	Delay time.Duration
	// Quantile is the quantile used when Delay is 0, in (0, 1). 0: 0.95.
	Quantile float64
	// DelayRefresh is how long a quantile read from the executor is used.
	// 0: 1 s.
	DelayRefresh time.Duration
	// Reserve is how many slots of the bulkhead a hedge leaves free for
	// the callers' own calls: a hedge starts only if more than Reserve
	// slots are free and no call is queued. 0: a tenth of the bulkhead's
	// slots (rounded down); negative: none.
	Reserve int
	// Budget caps the hedges per supplier. The zero value allows 5 % of
	// the supplier's recent calls plus 10 hedges per 10 s.
	Budget Budget
	// Logger gets a Debug line for each hedge started and each the budget
	// refused. nil: no logging.
	Logger *slog.Logger
}

// Hedger makes hedged calls: a call that has not answered after a delay
// gets a second attempt, and the first success wins. It is meant for calls
// whose latency has a long tail (a slow replica, a GC pause, a lost
// packet): the hedge cuts the tail for a few percent of extra calls.
// Make one with NewHedger and share it; budgets and Stats are per supplier,
// whose state (a few hundred bytes) is made at its first call and kept for the
// Hedger's life. Safe for concurrent use.
type Hedger struct {
	cfg       HedgeConfig
	epoch     time.Time
	suppliers suppliers[hedgeSupplier]
}

// hedgeSupplier is a Hedger's state for one supplier.
type hedgeSupplier struct {
	budget                                *budget
	delay, delayAt                        atomic.Int64 // ns; delayAt since the Hedger's epoch, 0: never read
	calls, hedges, won, refused, declined atomic.Uint64
	// admit makes the hedges of the supplier take turns from reading the
	// free slots to taking one: hedges asked for at the same instant
	// would otherwise all see the same free slots and take the reserve.
	admit sync.Mutex
}

// NewHedger validates cfg and returns a Hedger, or an error naming the
// field that is wrong.
func NewHedger(cfg HedgeConfig) (*Hedger, error) {
	switch {
	case cfg.Delay < 0:
		return nil, fmt.Errorf("policy: HedgeConfig.Delay must not be negative (0: the supplier's recent p95), got %v", cfg.Delay)
	case cfg.Quantile < 0 || cfg.Quantile >= 1 || math.IsNaN(cfg.Quantile):
		return nil, fmt.Errorf("policy: HedgeConfig.Quantile must be in [0, 1) (0: 0.95), got %v", cfg.Quantile)
	case cfg.DelayRefresh < 0:
		return nil, fmt.Errorf("policy: HedgeConfig.DelayRefresh must not be negative (0: 1s), got %v", cfg.DelayRefresh)
	}
	if cfg.Quantile == 0 {
		cfg.Quantile = 0.95
	}
	if cfg.DelayRefresh == 0 {
		cfg.DelayRefresh = time.Second
	}
	b, err := cfg.Budget.withDefaults("HedgeConfig.Budget", 0.05)
	if err != nil {
		return nil, err
	}
	cfg.Budget = b
	h := &Hedger{cfg: cfg, epoch: time.Now()}
	h.suppliers.make = func(string) *hedgeSupplier { return &hedgeSupplier{budget: newBudget(cfg.Budget)} }
	return h, nil
}

// Hedge calls fn through ex and, if it has not answered after the delay
// (HedgeConfig.Delay, by default the supplier's recent p95), starts a
// second attempt; it returns the first success, or the first attempt's
// error if both fail. Only for idempotent calls: fn may run twice at once.
// Both attempts go through ex's breaker and bulkhead, and the hedge yields:
// it starts only while the breaker is closed, more than
// HedgeConfig.Reserve slots are free, nobody is queued and the supplier's
// budget allows it. When Hedge returns it cancels the attempt still
// running, which counts as Ignored on the breaker.
func Hedge[T any](ctx context.Context, h *Hedger, ex *executor.Executor, fn func(context.Context) (T, error)) (T, error) {
	var zero T
	if err := badCall(ctx, "Hedge", "Hedger", h == nil, h != nil && h.suppliers.make == nil, ex, fn == nil); err != nil {
		return zero, err
	}
	s := h.suppliers.get(ex.Name())
	s.calls.Add(1)
	s.budget.call()
	actx, cancel := context.WithCancel(ctx)
	defer cancel() // the loser's context
	first, err := executor.Submit(actx, ex, fn)
	if err != nil {
		return zero, err
	}
	delay := h.delay(s, ex)
	if delay <= 0 {
		return first.Await(ctx)
	}
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-first.Done():
		return first.Await(ctx)
	case <-ctx.Done():
		return zero, ctx.Err()
	case <-t.C:
		// The first attempt may have ended as the delay did, and select
		// picked the timer: a hedge started now would spend the budget
		// after the outcome is known, and could turn the first attempt's
		// permanent error into the hedge's success.
		select {
		case <-first.Done():
			return first.Await(ctx)
		default:
		}
	}
	second := start(actx, h, s, ex, fn)
	if second == nil {
		return first.Await(ctx)
	}
	return race(ctx, s, first, second)
}

// delay returns the supplier's hedging delay, reading the executor's
// quantile when the one kept is older than DelayRefresh.
func (h *Hedger) delay(s *hedgeSupplier, ex *executor.Executor) time.Duration {
	if h.cfg.Delay > 0 {
		return h.cfg.Delay
	}
	now := int64(time.Since(h.epoch)) + 1 // never 0: 0 is "never read"
	if at := s.delayAt.Load(); at != 0 && now-at < int64(h.cfg.DelayRefresh) {
		return time.Duration(s.delay.Load())
	}
	d := ex.Latency(h.cfg.Quantile)
	s.delay.Store(int64(d))
	s.delayAt.Store(now)
	return d
}

// start submits the hedge if the budget, the breaker and the bulkhead
// allow it, and returns its future or nil. The budget is asked first: it
// is the cheaper check, and the one that refuses when a slow supplier
// would have every call hedged.
func start[T any](ctx context.Context, h *Hedger, s *hedgeSupplier, ex *executor.Executor, fn func(context.Context) (T, error)) *future.Future[T] {
	if s.budget.spend() != nil {
		s.declined.Add(1)
		h.log(ctx, "hedge refused by the budget", ex.Name())
		return nil
	}
	s.admit.Lock()
	defer s.admit.Unlock()
	st := ex.Stats()
	reserve := h.cfg.Reserve
	if reserve == 0 {
		reserve = st.Slots / 10
	}
	if st.Breaker.State != breaker.Closed || st.Queued > 0 || st.Free <= max(reserve, 0) {
		s.budget.refund()
		s.refused.Add(1)
		return nil
	}
	f, err := executor.Submit(ctx, ex, fn)
	if err != nil {
		s.budget.refund()
		s.refused.Add(1)
		return nil
	}
	s.hedges.Add(1)
	h.log(ctx, "hedge", ex.Name())
	return f
}

// race returns the first success of the two attempts, or the first
// attempt's error if both fail.
func race[T any](ctx context.Context, s *hedgeSupplier, first, second *future.Future[T]) (T, error) {
	var zero T
	select {
	case <-first.Done():
		if v, err := first.Await(ctx); err == nil {
			return v, nil
		}
		if v, err := second.Await(ctx); err == nil {
			s.won.Add(1)
			return v, nil
		}
	case <-second.Done():
		if v, err := second.Await(ctx); err == nil {
			s.won.Add(1)
			return v, nil
		}
	case <-ctx.Done():
		return zero, ctx.Err()
	}
	return first.Await(ctx)
}

func (h *Hedger) log(ctx context.Context, msg, supplier string) {
	l := h.cfg.Logger
	if l == nil || !l.Enabled(ctx, slog.LevelDebug) {
		return
	}
	l.LogAttrs(ctx, slog.LevelDebug, "fusebox: "+msg, slog.String("supplier", supplier))
}

// HedgeStats are a Hedger's counts for one supplier.
type HedgeStats struct {
	Supplier string
	// Calls made through the Hedger.
	Calls uint64
	// Hedges counts the second attempts started; Won those that answered
	// first with a success.
	Hedges, Won uint64
	// BudgetRefused counts the hedges the budget refused; Refused those
	// the executor refused or that would have taken a reserved slot (the
	// breaker not closed, too few free slots, callers queued).
	BudgetRefused, Refused uint64
	// Delay is the hedging delay in use (0: none yet, no history).
	Delay time.Duration
}

// Stats returns the counts of every supplier the Hedger has called, by
// supplier name (none for a nil Hedger).
func (h *Hedger) Stats() []HedgeStats {
	if h == nil {
		return nil
	}
	var out []HedgeStats
	h.suppliers.each(func(name string, s *hedgeSupplier) {
		d := h.cfg.Delay
		if d == 0 {
			d = time.Duration(s.delay.Load())
		}
		out = append(out, HedgeStats{
			Supplier: name, Calls: s.calls.Load(), Hedges: s.hedges.Load(), Won: s.won.Load(),
			BudgetRefused: s.declined.Load(), Refused: s.refused.Load(), Delay: d,
		})
	})
	return out
}
