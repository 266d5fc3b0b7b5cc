package executor_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// gauge counts the calls inside a function and the most at once.
type gauge struct{ in, peak atomic.Int64 }

func (g *gauge) enter() {
	n := g.in.Add(1)
	for m := g.peak.Load(); n > m && !g.peak.CompareAndSwap(m, n); m = g.peak.Load() {
	}
}

func (g *gauge) leave() { g.in.Add(-1) }

func TestReconfigureResizesTheBulkhead(t *testing.T) {
	t.Run("growing starts queued calls, shrinking lets running calls finish", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			cfg := executor.Config{Slots: 4, Queue: 10, InvocationTimeout: time.Hour,
				Breaker: breaker.Config{ResetTimeout: 3 * time.Hour}}
			ex := newExecutor(t, cfg)
			var g gauge
			next := make(chan struct{})
			fn := func(ctx context.Context) (int, error) {
				g.enter()
				defer g.leave()
				select {
				case <-next:
					return 1, nil
				case <-ctx.Done():
					return 0, ctx.Err()
				}
			}
			var futs []interface{ Done() <-chan struct{} }
			submit := func() {
				f, err := executor.Submit(t.Context(), ex, fn)
				require.NoError(t, err)
				futs = append(futs, f)
			}
			for range 10 {
				submit()
			}
			synctest.Wait()
			require.Equal(t, int64(4), g.in.Load())
			require.Equal(t, 6, ex.Stats().Queued)

			cfg.Slots = 8
			require.NoError(t, ex.Reconfigure(cfg))
			synctest.Wait()
			assert.Equal(t, int64(8), g.in.Load(), "the four new slots went to queued calls at once")
			assert.Equal(t, 2, ex.Stats().Queued)

			cfg.Slots = 2
			require.NoError(t, ex.Reconfigure(cfg))
			submit()
			synctest.Wait()
			s := ex.Stats()
			assert.Equal(t, int64(8), g.in.Load(), "no running call is dropped")
			assert.Equal(t, 2, s.Slots)
			assert.Equal(t, 8, s.InUse)
			assert.Equal(t, 0, s.Free)
			assert.Equal(t, 3, s.Queued, "a new call queues: the new size is in force")

			// Each call that ends frees its slot; no queued call starts
			// until the running ones are down to the new size.
			for want := int64(7); want >= 2; want-- {
				next <- struct{}{}
				synctest.Wait()
				assert.Equal(t, want, g.in.Load())
				assert.Equal(t, 3, ex.Stats().Queued)
			}
			next <- struct{}{}
			synctest.Wait()
			assert.Equal(t, int64(2), g.in.Load(), "at the new size, an ending call hands its slot to a queued one")
			assert.Equal(t, 2, ex.Stats().Queued)
			close(next)
			for _, f := range futs {
				<-f.Done()
			}
			assert.Equal(t, int64(8), g.peak.Load())
			assert.Equal(t, uint64(11), ex.Stats().Successes)
		})
	})
	t.Run("under load the calls in flight stay within the sizes in force", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			cfg := executor.Config{Slots: 6, Queue: 50, InvocationTimeout: time.Second,
				Breaker: breaker.Config{ConsecutiveFailures: -1, ResetTimeout: 10 * time.Second}}
			ex := newExecutor(t, cfg)
			var g gauge
			var bound atomic.Int64 // the most calls allowed inside right now
			bound.Store(6)
			var over atomic.Int64
			fn := func(context.Context) (int, error) {
				g.enter()
				if g.in.Load() > bound.Load() {
					over.Add(1)
				}
				time.Sleep(10 * time.Millisecond)
				g.leave()
				return 1, nil
			}
			var wg sync.WaitGroup
			stop := make(chan struct{})
			for w := range 16 {
				wg.Go(func() {
					rnd := rand.New(rand.NewPCG(uint64(w), 1))
					for i := 0; i < 5000; i++ {
						select {
						case <-stop:
							return
						default:
						}
						_, _ = executor.Do(t.Context(), ex, fn) // saturation refusals are fine
						time.Sleep(time.Duration(rnd.IntN(5)) * time.Millisecond)
					}
				})
			}
			sizes := []int{3, 9, 1, 12, 5}
			for _, n := range sizes {
				time.Sleep(200 * time.Millisecond)
				// While a bulkhead shrinks, the calls already running may
				// exceed the new size, never the old one.
				bound.Store(int64(max(cfg.Slots, n)))
				cfg.Slots = n
				require.NoError(t, ex.Reconfigure(cfg))
				time.Sleep(20 * time.Millisecond) // every call running at the change has ended
				bound.Store(int64(n))
				assert.LessOrEqual(t, ex.Stats().InUse, n, "converged to the new size")
			}
			close(stop)
			wg.Wait()
			assert.Zero(t, over.Load(), "calls inside above the bound")
			assert.Equal(t, int64(12), g.peak.Load(), "the largest size was used")
			assert.Zero(t, ex.Stats().InUse)
		})
	})
}

func TestReconfigureTimeoutAppliesToNewCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := executor.Config{InvocationTimeout: time.Second, Breaker: breaker.Config{ResetTimeout: time.Minute}}
		ex := newExecutor(t, cfg)
		hang := func(ctx context.Context) (int, error) { <-ctx.Done(); return 0, ctx.Err() }
		start := time.Now()
		old, err := executor.Submit(t.Context(), ex, hang)
		require.NoError(t, err)
		cfg.InvocationTimeout = 3 * time.Second
		require.NoError(t, ex.Reconfigure(cfg))
		young, err := executor.Submit(t.Context(), ex, hang)
		require.NoError(t, err)

		_, err = old.Await(t.Context())
		assert.ErrorIs(t, err, executor.ErrTimeout)
		assert.Equal(t, time.Second, time.Since(start), "the running call keeps its deadline")
		_, err = young.Await(t.Context())
		assert.ErrorIs(t, err, executor.ErrTimeout)
		assert.Equal(t, 3*time.Second, time.Since(start), "a new call has the new timeout")
	})
}

func TestReconfigureKeepsAnOpenBreaker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := executor.Config{Breaker: breaker.Config{ConsecutiveFailures: 2, ResetTimeout: 10 * time.Second}}
		ex := newExecutor(t, cfg)
		for range 2 {
			_, err := executor.Do(t.Context(), ex, func(context.Context) (int, error) { return 0, errBoom })
			require.ErrorIs(t, err, errBoom)
		}
		before := ex.Stats().Breaker
		require.Equal(t, breaker.Open, before.State)

		cfg.Slots = 3
		cfg.Breaker = breaker.Config{ConsecutiveFailures: 7, ResetTimeout: 2 * time.Second}
		require.NoError(t, ex.Reconfigure(cfg))
		after := ex.Stats().Breaker
		assert.Equal(t, breaker.Open, after.State)
		assert.Equal(t, before.OpenUntil, after.OpenUntil, "the probe time stays")
		assert.Equal(t, before.Generation, after.Generation)
		assert.Equal(t, 3, ex.Stats().Slots)

		time.Sleep(5 * time.Second) // past the new reset timeout, before the old probe time
		_, err := executor.Do(t.Context(), ex, func(context.Context) (int, error) { return 1, nil })
		assert.ErrorIs(t, err, breaker.ErrOpen)
		time.Sleep(5 * time.Second)
		_, err = executor.Do(t.Context(), ex, func(context.Context) (int, error) { return 1, nil })
		require.NoError(t, err, "the probe at the old probe time")
		assert.Equal(t, breaker.Closed, ex.Breaker().State())
	})
}

func TestReconfigureValidatesWhole(t *testing.T) {
	good := executor.GroupConfig{
		Default:   executor.Config{Slots: 2},
		Suppliers: map[string]executor.Config{"payments": {Slots: 4}},
	}
	g, err := executor.NewGroup(good)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, g.Close(context.Background())) })

	bad := executor.GroupConfig{
		Default: executor.Config{Slots: 20},
		Suppliers: map[string]executor.Config{
			"payments":  {Slots: 8},                                     // valid: must not be applied
			"inventory": {Queue: 2, LowWater: 2, InvocationTimeout: -1}, // invalid twice
		},
		IdleTimeout: -time.Second,
	}
	_, want := executor.NewGroup(bad)
	require.Error(t, want)
	err = g.Reconfigure(bad)
	require.Error(t, err)
	assert.Equal(t, want.Error(), err.Error(), "the same errors as NewGroup")

	pay, ok := g.Lookup("payments")
	require.True(t, ok)
	assert.Equal(t, 4, pay.Stats().Slots, "nothing applied")
	_, ok = g.Lookup("inventory")
	assert.False(t, ok, "no executor made for a supplier of the refused config")

	ex := newExecutor(t, executor.Config{Slots: 5})
	err = ex.Reconfigure(executor.Config{Slots: -1, Breaker: breaker.Config{FailureRate: 3}})
	require.Error(t, err)
	assert.ErrorContains(t, err, "Slots")
	assert.ErrorContains(t, err, "FailureRate")
	assert.Equal(t, 5, ex.Stats().Slots)
}

type nopRunner struct{ _ int } // not zero-sized: two of them are two runners

func (*nopRunner) Go(fn func()) error { go fn(); return nil }

func TestGroupReconfigureSuppliers(t *testing.T) {
	base := func() executor.GroupConfig {
		return executor.GroupConfig{
			Default: executor.Config{Slots: 2},
			Suppliers: map[string]executor.Config{
				"payments":  {Slots: 4},
				"inventory": {Slots: 6},
			},
		}
	}
	t.Run("a new supplier gets its executor; a removed one keeps its state under Default", func(t *testing.T) {
		g, err := executor.NewGroup(base())
		require.NoError(t, err)
		defer g.Close(context.Background())
		inv, _ := g.Lookup("inventory")
		inv.Breaker().Trip(breaker.Manual)

		cfg := base()
		delete(cfg.Suppliers, "inventory")
		cfg.Suppliers["search"] = executor.Config{Slots: 9}
		require.NoError(t, g.Reconfigure(cfg))
		assert.Equal(t, []string{"inventory", "payments", "search"}, g.Names())
		s, ok := g.Lookup("search")
		require.True(t, ok, "made at Reconfigure, before any call")
		assert.Equal(t, 9, s.Stats().Slots)
		same, err := g.Executor("inventory")
		require.NoError(t, err)
		assert.Same(t, inv, same, "the same executor")
		assert.Equal(t, 2, same.Stats().Slots, "with the default's settings now")
		assert.Equal(t, breaker.Open, same.Breaker().State(), "and its breaker state")
	})
	t.Run("a Strict group refuses a removed supplier and closes its executor after its calls", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			cfg := base()
			cfg.Strict = true
			g, err := executor.NewGroup(cfg)
			require.NoError(t, err)
			release := make(chan struct{})
			f, err := executor.SubmitIn(t.Context(), g, "inventory", func(context.Context) (int, error) { <-release; return 7, nil })
			require.NoError(t, err)

			delete(cfg.Suppliers, "inventory")
			require.NoError(t, g.Reconfigure(cfg))
			_, err = g.Executor("inventory")
			assert.ErrorIs(t, err, executor.ErrUnknownSupplier)
			_, err = executor.DoIn(t.Context(), g, "inventory", func(context.Context) (int, error) { return 1, nil })
			assert.ErrorIs(t, err, executor.ErrUnknownSupplier)
			_, ok := g.Lookup("inventory")
			assert.False(t, ok)

			close(release)
			v, err := f.Await(t.Context())
			require.NoError(t, err, "the call in flight finishes")
			assert.Equal(t, 7, v)
			require.NoError(t, g.Close(t.Context()))
		})
	})
	t.Run("OnTransition is replaced, nil keeps it; the Runner cannot change", func(t *testing.T) {
		var first, second events
		cfg := base()
		cfg.OnTransition = first.listen
		cfg.Runner = &nopRunner{}
		g, err := executor.NewGroup(cfg)
		require.NoError(t, err)
		defer g.Close(context.Background())
		pay, _ := g.Lookup("payments")

		keep := base() // nil Runner and OnTransition: keep the group's
		require.NoError(t, g.Reconfigure(keep))
		pay.Breaker().Trip(breaker.Manual)
		assert.Len(t, first.list(), 1)

		keep.OnTransition = second.listen
		require.NoError(t, g.Reconfigure(keep))
		pay.Breaker().Reset()
		assert.Len(t, first.list(), 1)
		assert.Len(t, second.list(), 1)

		keep.Runner = &nopRunner{}
		err = g.Reconfigure(keep)
		assert.ErrorContains(t, err, "Runner cannot change")
		keep.Runner = cfg.Runner
		assert.NoError(t, g.Reconfigure(keep))
	})
	t.Run("after Close it refuses", func(t *testing.T) {
		g, err := executor.NewGroup(base())
		require.NoError(t, err)
		require.NoError(t, g.Close(context.Background()))
		assert.ErrorIs(t, g.Reconfigure(base()), executor.ErrClosed)
	})
}

// Reconfigures race with calls of every kind; run under -race. Every call
// ends, nothing leaks, and the slots come back.
func TestReconfigureConcurrentWithSubmit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfgs := []executor.GroupConfig{
			{Default: executor.Config{Slots: 3, Queue: 4}, Suppliers: map[string]executor.Config{"a": {Slots: 2}}},
			{Default: executor.Config{Slots: 8, InvocationTimeout: 50 * time.Millisecond},
				Suppliers: map[string]executor.Config{"a": {Slots: 5, Queue: 2, Breaker: breaker.Config{FailureRate: 0.5, WindowSize: 20}}, "b": {}}},
			{Default: executor.Config{Slots: 1}, Suppliers: map[string]executor.Config{"b": {Slots: 4,
				Breaker: breaker.Config{ErrorKinds: []breaker.KindRule{{Name: "boom", Match: func(err error) bool { return err == errBoom }, Consecutive: 3}}}}}},
		}
		g, err := executor.NewGroup(cfgs[0])
		require.NoError(t, err)
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Go(func() {
				rnd := rand.New(rand.NewPCG(uint64(w), 2))
				for range 300 {
					name := []string{"a", "b", "c"}[rnd.IntN(3)]
					d := time.Duration(rnd.IntN(80)) * time.Millisecond
					fail := rnd.IntN(4) == 0
					_, _ = executor.DoIn(t.Context(), g, name, func(ctx context.Context) (int, error) {
						select {
						case <-time.After(d):
						case <-ctx.Done():
							return 0, ctx.Err()
						}
						if fail {
							return 0, errBoom
						}
						return 1, nil
					})
					time.Sleep(time.Duration(rnd.IntN(20)) * time.Millisecond)
				}
			})
		}
		wg.Go(func() {
			for i := range 60 {
				time.Sleep(30 * time.Millisecond)
				assert.NoError(t, g.Reconfigure(cfgs[i%len(cfgs)]))
			}
		})
		wg.Wait()
		time.Sleep(time.Second)
		for _, name := range g.Names() {
			ex, _ := g.Lookup(name)
			s := ex.Stats()
			assert.Zero(t, s.InUse, name)
			assert.Zero(t, s.Queued, name)
		}
		require.NoError(t, g.Close(t.Context()))
	})
}

// A call that runs across a change of the timeout is measured from its own
// start: the latency history is not skewed by the difference.
func TestReconfigureKeepsLatenciesExact(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := executor.Config{Slots: 32, InvocationTimeout: time.Second, Breaker: breaker.Config{ResetTimeout: time.Minute}}
		ex := newExecutor(t, cfg)
		var futs []interface{ Done() <-chan struct{} }
		for range 24 { // enough for a history
			f, err := executor.Submit(t.Context(), ex, func(context.Context) (int, error) {
				time.Sleep(400 * time.Millisecond)
				return 1, nil
			})
			require.NoError(t, err)
			futs = append(futs, f)
		}
		time.Sleep(100 * time.Millisecond)
		cfg.InvocationTimeout = 20 * time.Second
		require.NoError(t, ex.Reconfigure(cfg))
		for _, f := range futs {
			<-f.Done()
		}
		s := ex.Stats()
		require.Equal(t, uint64(24), s.Successes)
		assert.InDelta(t, 400*time.Millisecond, s.LatencyP50, float64(100*time.Millisecond), "got p50 %v", s.LatencyP50)
		assert.Less(t, s.LatencyP99, time.Second, "got p99 %v", s.LatencyP99)
	})
}

// The stuck criterion follows the configuration: a lower MaxAge makes the
// hung calls that fill the bulkhead stuck sooner.
func TestReconfigureStuckCriterion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := executor.Config{Slots: 2, InvocationTimeout: 10 * time.Second,
			Stuck: executor.StuckConfig{MaxAge: 8 * time.Second}, Breaker: breaker.Config{ResetTimeout: time.Minute}}
		ex := newExecutor(t, cfg)
		s := newSupplier()
		s.hang()
		for range 2 {
			_, err := executor.Submit(t.Context(), ex, s.cooperative)
			require.NoError(t, err)
		}
		time.Sleep(2 * time.Second)
		_, err := executor.Submit(t.Context(), ex, s.cooperative)
		require.ErrorIs(t, err, executor.ErrBusy)
		require.Equal(t, breaker.Closed, ex.Breaker().State(), "2 s old, under the 8 s criterion: busy")

		cfg.Stuck.MaxAge = time.Second
		require.NoError(t, ex.Reconfigure(cfg))
		_, err = executor.Submit(t.Context(), ex, s.cooperative)
		require.ErrorIs(t, err, executor.ErrSaturated)
		assert.Equal(t, breaker.Open, ex.Breaker().State(), "2 s old, over the new 1 s criterion: stuck")
		s.unhang()
	})
}

// An executor of a group reconfigured on its own still reports to the
// group's listeners.
func TestExecutorReconfigureInAGroupKeepsItsListeners(t *testing.T) {
	var group, sub, own events
	g, err := executor.NewGroup(executor.GroupConfig{OnTransition: group.listen})
	require.NoError(t, err)
	defer g.Close(context.Background())
	unsubscribe := g.Subscribe(sub.listen)
	defer unsubscribe()
	ex, err := g.Executor("payments")
	require.NoError(t, err)

	require.NoError(t, ex.Reconfigure(executor.Config{Slots: 3}))
	ex.Breaker().Trip(breaker.Manual)
	assert.Equal(t, []string{"closed>open:manual"}, group.list(), "the group's OnTransition")
	assert.Equal(t, group.list(), sub.list(), "the group's subscribers")

	// A listener of its own replaces the group's OnTransition (as in
	// GroupConfig), the subscribers still follow.
	require.NoError(t, ex.Reconfigure(executor.Config{Slots: 3, Breaker: breaker.Config{OnTransition: own.listen}}))
	ex.Breaker().Reset()
	assert.Equal(t, []string{"open>closed:manual"}, own.list())
	assert.Len(t, group.list(), 1)
	assert.Equal(t, []string{"closed>open:manual", "open>closed:manual"}, sub.list())
}
