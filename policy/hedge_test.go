package policy_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/policy"
)

// slowFirst returns a function whose first call takes slow and whose
// later calls take fast; both honour their context.
func slowFirst(slow, fast time.Duration) (func(context.Context) (int, error), *atomic.Int32) {
	var n atomic.Int32
	return func(ctx context.Context) (int, error) {
		i := n.Add(1)
		d := fast
		if i == 1 {
			d = slow
		}
		select {
		case <-time.After(d):
			return int(i), nil
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}, &n
}

// pausedCtx is a context that never ends, whose Done, the first time it is
// called while ex has a call running, sleeps for pause: it stands for a
// caller's goroutine that is descheduled on its way into a select.
type pausedCtx struct {
	context.Context
	ex     *executor.Executor
	pause  time.Duration
	paused atomic.Bool
}

func (c *pausedCtx) Done() <-chan struct{} {
	if c.ex.Stats().InUse > 0 && c.paused.CompareAndSwap(false, true) {
		time.Sleep(c.pause)
	}
	return nil
}

func TestHedge(t *testing.T) {
	t.Run("a slow call is hedged, the hedge wins, and the loser's slot is returned", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, "search", 4)
			h, err := policy.NewHedger(policy.HedgeConfig{Delay: 100 * time.Millisecond})
			require.NoError(t, err)
			fn, n := slowFirst(time.Second, 10*time.Millisecond)
			start := time.Now()
			v, err := policy.Hedge(context.Background(), h, ex, fn)
			require.NoError(t, err)
			assert.Equal(t, 2, v, "the hedge's answer")
			assert.Equal(t, 110*time.Millisecond, time.Since(start))
			assert.Equal(t, int32(2), n.Load())
			synctest.Wait() // the loser sees its cancellation and returns
			s := ex.Stats()
			assert.Zero(t, s.InUse, "the loser's slot is back")
			assert.Equal(t, uint64(1), s.Successes)
			assert.Equal(t, uint64(1), s.Cancelled, "the loser counts as cancelled")
			assert.Zero(t, s.Failures, "and not as the supplier's failure")
			hs := h.Stats()[0]
			assert.Equal(t, policy.HedgeStats{Supplier: "search", Calls: 1, Hedges: 1, Won: 1, Delay: 100 * time.Millisecond}, hs)
		})
	})
	t.Run("a call that answers before the delay is not hedged", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, "search", 4)
			h, _ := policy.NewHedger(policy.HedgeConfig{Delay: 100 * time.Millisecond})
			fn, n := slowFirst(50*time.Millisecond, 0)
			v, err := policy.Hedge(context.Background(), h, ex, fn)
			require.NoError(t, err)
			assert.Equal(t, 1, v)
			assert.Equal(t, int32(1), n.Load())
			assert.Zero(t, h.Stats()[0].Hedges)
		})
	})
	t.Run("the first attempt wins if it answers before the hedge", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, "search", 4)
			h, _ := policy.NewHedger(policy.HedgeConfig{Delay: 100 * time.Millisecond})
			fn, _ := slowFirst(150*time.Millisecond, time.Second)
			v, err := policy.Hedge(context.Background(), h, ex, fn)
			require.NoError(t, err)
			assert.Equal(t, 1, v)
			synctest.Wait()
			assert.Zero(t, ex.Stats().InUse, "the hedge's slot is back")
			hs := h.Stats()[0]
			assert.Equal(t, uint64(1), hs.Hedges)
			assert.Zero(t, hs.Won)
		})
	})
	t.Run("when both fail the first attempt's error is returned", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, "search", 4)
			h, _ := policy.NewHedger(policy.HedgeConfig{Delay: 100 * time.Millisecond})
			var n atomic.Int32
			_, err := policy.Hedge(context.Background(), h, ex, func(context.Context) (int, error) {
				if n.Add(1) == 1 {
					time.Sleep(200 * time.Millisecond)
					return 0, errBadGateway
				}
				return 0, afterError{}
			})
			require.ErrorIs(t, err, errBadGateway)
		})
	})
	t.Run("a first attempt that ended by the time the delay fired is not hedged", func(t *testing.T) {
		// The caller's goroutine reaches the select only once both the
		// first attempt has failed and the delay has fired (pausedCtx),
		// and select picks either at random: over 64 calls the timer is
		// picked (and a hedge started, on the old code) in all but 2^-64
		// of runs.
		for range 64 {
			synctest.Test(t, func(t *testing.T) {
				ex := newExecutor(t, "search", 4)
				h, _ := policy.NewHedger(policy.HedgeConfig{Delay: 100 * time.Millisecond, Budget: policy.Budget{Unlimited: true}})
				var n atomic.Int32
				ctx := &pausedCtx{Context: context.Background(), ex: ex, pause: 200 * time.Millisecond}
				_, err := policy.Hedge(ctx, h, ex, func(context.Context) (int, error) {
					if n.Add(1) == 1 {
						time.Sleep(50 * time.Millisecond)
						return 0, errBadGateway // a permanent error
					}
					return 2, nil
				})
				require.True(t, ctx.paused.Load(), "the caller was paused with the first attempt running")
				require.ErrorIs(t, err, errBadGateway, "the first attempt's outcome")
				assert.Equal(t, int32(1), n.Load(), "no hedge")
				assert.Zero(t, h.Stats()[0].Hedges)
			})
		}
	})
	t.Run("the default delay is the supplier's recent p95", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, "search", 4)
			h, _ := policy.NewHedger(policy.HedgeConfig{})
			fast := func(context.Context) (int, error) { time.Sleep(20 * time.Millisecond); return 0, nil }
			for range 100 {
				_, err := policy.Hedge(context.Background(), h, ex, fast)
				require.NoError(t, err)
			}
			require.Zero(t, h.Stats()[0].Hedges, "no history at first, then no call slower than the p95")
			time.Sleep(time.Second) // the delay kept is refreshed
			fn, _ := slowFirst(time.Second, 20*time.Millisecond)
			start := time.Now()
			_, err := policy.Hedge(context.Background(), h, ex, fn)
			require.NoError(t, err)
			p95 := ex.Latency(0.95)
			assert.Equal(t, p95, h.Stats()[0].Delay)
			assert.InDelta(t, 20*time.Millisecond, p95, float64(5*time.Millisecond))
			assert.Equal(t, p95+20*time.Millisecond, time.Since(start))
		})
	})
}

func TestHedgeYieldsToOriginals(t *testing.T) {
	t.Run("a full bulkhead refuses the hedge, and the executor never sees it", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, "search", 2)
			h, _ := policy.NewHedger(policy.HedgeConfig{Delay: 100 * time.Millisecond})
			var wg sync.WaitGroup
			for range 2 {
				wg.Go(func() {
					_, err := policy.Hedge(context.Background(), h, ex, func(context.Context) (int, error) { time.Sleep(500 * time.Millisecond); return 0, nil })
					assert.NoError(t, err)
				})
			}
			wg.Wait()
			hs := h.Stats()[0]
			assert.Equal(t, uint64(2), hs.Refused)
			assert.Zero(t, hs.Hedges)
			s := ex.Stats()
			assert.Zero(t, s.Rejected.Busy+s.Rejected.Saturated, "no refusal on the executor")
			assert.Equal(t, uint64(2), s.Successes)
		})
	})
	t.Run("hedges leave the reserve free: an original arriving later gets its slot", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, "search", 10) // a reserve of 1
			h, _ := policy.NewHedger(policy.HedgeConfig{Delay: 100 * time.Millisecond})
			slow := func(ctx context.Context) (int, error) {
				select {
				case <-time.After(time.Second / 2):
				case <-ctx.Done():
				}
				return 0, nil
			}
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() { _, _ = policy.Hedge(context.Background(), h, ex, slow) })
			}
			time.Sleep(200 * time.Millisecond) // every call asked for its hedge
			synctest.Wait()
			assert.Equal(t, 9, ex.Stats().InUse, "8 originals and one hedge: the 10th slot is the reserve")
			_, err := executor.Submit(context.Background(), ex, slow)
			require.NoError(t, err, "an original is admitted")
			wg.Wait()
			hs := h.Stats()[0]
			assert.Equal(t, uint64(1), hs.Hedges)
			assert.Equal(t, uint64(7), hs.Refused)
			assert.Zero(t, ex.Stats().Rejected.Busy)
		})
	})
	t.Run("no hedge while the breaker is not closed", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, "search", 4)
			h, _ := policy.NewHedger(policy.HedgeConfig{Delay: 100 * time.Millisecond})
			fn, n := slowFirst(200*time.Millisecond, 0)
			f := func(ctx context.Context) (int, error) {
				if n.Load() == 0 {
					ex.Breaker().Trip(breaker.Manual) // tripped while the first attempt runs
				}
				return fn(ctx)
			}
			_, err := policy.Hedge(context.Background(), h, ex, f)
			require.NoError(t, err)
			assert.Equal(t, int32(1), n.Load())
			assert.Equal(t, uint64(1), h.Stats()[0].Refused)
		})
	})
}

func TestHedgeBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ex := newExecutor(t, "search", 400)
		const ratio, floor = 0.05, 2
		h, _ := policy.NewHedger(policy.HedgeConfig{Delay: 10 * time.Millisecond, Budget: policy.Budget{Ratio: ratio, Floor: floor, Window: time.Hour}})
		slow := func(ctx context.Context) (int, error) { time.Sleep(100 * time.Millisecond); return 0, nil }
		var wg sync.WaitGroup
		var calls atomic.Int64
		for range 100 { // every call is slow: every call would be hedged
			wg.Go(func() {
				for range 20 {
					_, err := policy.Hedge(context.Background(), h, ex, slow)
					calls.Add(1)
					assert.NoError(t, err)
				}
			})
		}
		wg.Wait()
		time.Sleep(time.Second) // the losers, which ignore their context, return
		hs := h.Stats()[0]
		require.Equal(t, uint64(calls.Load()), hs.Calls)
		assert.LessOrEqual(t, float64(hs.Hedges), ratio*float64(hs.Calls)+floor, "hedges %d of %d calls", hs.Hedges, hs.Calls)
		assert.GreaterOrEqual(t, float64(hs.Hedges), 0.9*ratio*float64(hs.Calls))
		assert.Equal(t, hs.Calls, hs.Hedges+hs.BudgetRefused)
		assert.Equal(t, hs.Calls+hs.Hedges, ex.Stats().Successes+ex.Stats().Cancelled, "calls that reached the supplier")
	})
}

func TestHedgeContext(t *testing.T) {
	t.Run("a caller's deadline ends both attempts", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, "search", 4)
			h, _ := policy.NewHedger(policy.HedgeConfig{Delay: 100 * time.Millisecond})
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			hang := func(ctx context.Context) (int, error) { <-ctx.Done(); return 0, ctx.Err() }
			start := time.Now()
			_, err := policy.Hedge(ctx, h, ex, hang)
			require.ErrorIs(t, err, context.DeadlineExceeded)
			assert.Equal(t, 300*time.Millisecond, time.Since(start))
			synctest.Wait()
			assert.Zero(t, ex.Stats().InUse)
			assert.Equal(t, uint64(1), h.Stats()[0].Hedges)
		})
	})
}

// No goroutine outlives a call: not the policy's, not the loser's, on
// real time (outside a bubble) with goleak.
func TestNoGoroutineOutlivesAHedgedCall(t *testing.T) {
	ex, err := executor.New("search", executor.Config{Slots: 4, InvocationTimeout: 5 * time.Second, Breaker: breakerWithReset(10 * time.Second)})
	require.NoError(t, err)
	h, _ := policy.NewHedger(policy.HedgeConfig{Delay: 5 * time.Millisecond, Budget: policy.Budget{Unlimited: true}})
	r, _ := policy.NewRetrier(policy.RetryConfig{Backoff: time.Millisecond})
	for i := range 20 {
		fn, _ := slowFirst(time.Minute, time.Millisecond)
		_, err := policy.Hedge(context.Background(), h, ex, fn)
		require.NoError(t, err, "%d %+v %+v", i, h.Stats(), ex.Stats())
		// Hedge returns with the winner; the loser, cancelled, gives its
		// slot back once its goroutine runs, which a loaded machine may
		// delay past the next call's start. Losers that keep their slots
		// leave the next hedge none (it is refused, and the call waits out
		// its slow first attempt), and four leave the call itself none:
		// wait for the event, not for a margin.
		require.Eventually(t, func() bool { return ex.Stats().InUse == 0 }, 10*time.Second, time.Millisecond,
			"%d: a loser keeps its slot", i)
		_, err = policy.Retry(context.Background(), r, ex, func(context.Context) (int, error) { return 0, errBadGateway })
		require.ErrorIs(t, err, errBadGateway)
	}
	goleak.VerifyNone(t, goleak.IgnoreCurrent())
	require.NoError(t, ex.Close(context.Background()))
	assert.Equal(t, uint64(20), h.Stats()[0].Won)
}

func TestHedgeConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   policy.HedgeConfig
		field string
	}{
		{"a negative delay", policy.HedgeConfig{Delay: -1}, "Delay"},
		{"a quantile of 1", policy.HedgeConfig{Quantile: 1}, "Quantile"},
		{"a negative refresh", policy.HedgeConfig{DelayRefresh: -1}, "DelayRefresh"},
		{"a negative ratio", policy.HedgeConfig{Budget: policy.Budget{Ratio: -0.1}}, "HedgeConfig.Budget.Ratio"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := policy.NewHedger(tc.cfg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.field)
		})
	}
}
