package executor

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/internal/adaptive"
)

func TestAdaptiveConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  AdaptiveConfig
		want string
	}{
		{"a negative Max", AdaptiveConfig{Max: -1}, "Adaptive.Max must be in [1, "},
		{"Min above Max", AdaptiveConfig{Max: 4, Min: 5}, "Adaptive.Min must be in [0, Adaptive.Max (4)], got 5"},
		{"Initial outside the bounds", AdaptiveConfig{Max: 40, Min: 5, Initial: 41}, "Adaptive.Initial must be in [Adaptive.Min (5), Adaptive.Max (40)]"},
		{"Min without Max", AdaptiveConfig{Min: 5}, "Adaptive.Min and Adaptive.Initial need Adaptive.Max"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New("s", Config{Adaptive: tc.cfg})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	t.Run("an InvocationTimeout over an hour", func(t *testing.T) {
		_, err := New("s", Config{Adaptive: AdaptiveConfig{Max: 64}, InvocationTimeout: 48 * time.Hour,
			Breaker: breaker.Config{ResetTimeout: 49 * time.Hour}})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "InvocationTimeout must be at most 1h0m0s with Adaptive sizing")
		ex, err := New("s", Config{InvocationTimeout: 48 * time.Hour, Breaker: breaker.Config{ResetTimeout: 49 * time.Hour}})
		require.NoError(t, err, "a static bulkhead takes it")
		require.Error(t, ex.Reconfigure(Config{Adaptive: AdaptiveConfig{Max: 64}, InvocationTimeout: 48 * time.Hour,
			Breaker: breaker.Config{ResetTimeout: 49 * time.Hour}}))
		require.NoError(t, ex.Close(context.Background()))
	})
	t.Run("the probes must fit in Min", func(t *testing.T) {
		_, err := New("s", Config{Adaptive: AdaptiveConfig{Max: 40, Min: 1}, Breaker: breaker.Config{HalfOpenProbes: 2}})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "HalfOpenProbes (2) must not exceed Slots (1)")
	})
	t.Run("Initial defaults to Slots within the bounds", func(t *testing.T) {
		for _, c := range []struct{ workers, min, max, want int }{{0, 0, 40, 10}, {20, 0, 40, 20}, {50, 0, 40, 40}, {2, 5, 40, 5}} {
			ex, err := New("s", Config{Slots: c.workers, Adaptive: AdaptiveConfig{Min: c.min, Max: c.max}})
			require.NoError(t, err)
			st := ex.Stats()
			assert.Equal(t, c.want, st.Slots, "Slots %d in [%d, %d]", c.workers, c.min, c.max)
			assert.True(t, st.Adaptive)
			assert.Equal(t, adaptive.ReasonInitial, st.LimitReason)
			require.NoError(t, ex.Close(context.Background()))
		}
	})
}

// TestAdaptiveExecutor drives an executor whose calls take 20 ms and
// whose callers keep 30 calls in flight: from 10 slots the limit grows
// past 30, and Reconfigure keeps it within new bounds or turns it off.
func TestAdaptiveExecutor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var told []string
		ex, err := New("s", Config{Slots: 10, Adaptive: AdaptiveConfig{Max: 100, OnChange: func(_ string, from, to int, why string) {
			mu.Lock()
			told = append(told, why)
			mu.Unlock()
			panic("a listener's panic is recovered")
		}}})
		require.NoError(t, err)
		call := func(ctx context.Context) (int, error) { time.Sleep(20 * time.Millisecond); return 0, nil }
		var wg sync.WaitGroup
		for range 30 {
			wg.Go(func() {
				for done := 0; done < 100; {
					if _, err := Do(t.Context(), ex, call); err != nil {
						time.Sleep(time.Millisecond) // refused: try again soon
						continue
					}
					done++
				}
			})
		}
		wg.Wait()
		st := ex.Stats()
		assert.GreaterOrEqual(t, st.Slots, 30, "the limit grew to the callers' concurrency")
		assert.LessOrEqual(t, st.Slots, 100)
		assert.Equal(t, breaker.Closed, st.Breaker.State, "busy refusals never trip")
		assert.InDelta(t, float64(20*time.Millisecond), float64(st.LimitBaseline), float64(5*time.Millisecond))
		mu.Lock()
		assert.NotEmpty(t, told, "OnChange was told")
		assert.Contains(t, told, adaptive.ReasonSlowStart)
		mu.Unlock()

		require.NoError(t, ex.Reconfigure(Config{Adaptive: AdaptiveConfig{Max: 16}}))
		assert.Equal(t, 16, ex.Stats().Slots, "kept within the new Max")
		require.NoError(t, ex.Reconfigure(Config{Slots: 7}))
		st = ex.Stats()
		assert.Equal(t, 7, st.Slots, "off: Slots again")
		assert.False(t, st.Adaptive)
		require.NoError(t, ex.Close(context.Background()))
	})
}

// BenchmarkAdaptObserve is what the adaptive limit adds where a successful
// call ends (the hook in record), beside the same hook with adaptive off:
// the ≤ 5 ns target, measured without the noise of a whole call.
func BenchmarkAdaptObserve(b *testing.B) {
	adaptBench(b, func(b *testing.B, ex *Executor, now int64) {
		n := uint64(0)
		for b.Loop() {
			n++
			if a := ex.adapt.Load(); a != nil && n%adaptive.Every == 0 {
				a.observe(ex, int64(20*time.Millisecond), now, true)
			}
		}
	})
}

// BenchmarkAdaptObserveParallel is the hook on two goroutines beside the
// write every call makes to the executor's shared line (its count of
// active calls): in parallel the hook's sampled atomic add is one more
// shared cache line, which this shows the price of.
func BenchmarkAdaptObserveParallel(b *testing.B) {
	adaptBench(b, func(b *testing.B, ex *Executor, now int64) {
		b.RunParallel(func(pb *testing.PB) {
			n := uint64(0)
			for pb.Next() {
				n++
				ex.active.Add(1)
				if a := ex.adapt.Load(); a != nil && n%adaptive.Every == 0 {
					a.observe(ex, int64(20*time.Millisecond), now, true)
				}
				ex.active.Add(-1)
			}
		})
	})
}

// adaptBench runs body with adaptive sizing off and on, each on an
// executor of its own, with the executor's clock now.
func adaptBench(b *testing.B, body func(b *testing.B, ex *Executor, now int64)) {
	for _, c := range []struct {
		name string
		cfg  Config
	}{{"off", Config{}}, {"on", Config{Adaptive: AdaptiveConfig{Max: 1 << 20, Initial: 1 << 20}}}} {
		b.Run(c.name, func(b *testing.B) {
			ex, err := New("bench", c.cfg)
			require.NoError(b, err)
			defer ex.Close(context.Background())
			b.ReportAllocs()
			body(b, ex, ex.now())
		})
	}
}

// A limit cut below Initial still trips on a hang: the stuck criterion
// counts half of the limit in force, not of the size the executor started
// with (half of 64 old calls could never be found in 4 slots).
func TestAdaptiveLimitBelowInitialStillTripsOnAHang(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ex, err := New("s", Config{Adaptive: AdaptiveConfig{Max: 64, Initial: 64}, InvocationTimeout: 5 * time.Second,
			Breaker: breaker.Config{ResetTimeout: 10 * time.Second}, Stuck: StuckConfig{MaxAge: time.Second}})
		require.NoError(t, err)
		ex.adapt.Load().lim.SetLimit(4)
		ex.resizeToLimit(ex.adapt.Load()) // as the limiter does after cuts
		hang := func(ctx context.Context) (int, error) { <-ctx.Done(); return 0, ctx.Err() }
		var futures []func()
		for range 4 {
			f, err := Submit(t.Context(), ex, hang)
			require.NoError(t, err)
			futures = append(futures, func() { _, _ = f.Await(context.Background()) })
		}
		_, err = Submit(t.Context(), ex, hang)
		require.ErrorIs(t, err, ErrBusy, "busy: the calls are young")
		assert.Equal(t, breaker.Closed, ex.Breaker().State())
		time.Sleep(1100 * time.Millisecond) // no history: the threshold is MaxAge
		_, err = Submit(t.Context(), ex, hang)
		require.ErrorIs(t, err, ErrSaturated)
		assert.Equal(t, breaker.Open, ex.Breaker().State(), "stuck: 4 calls older than 1 s hold the 4 slots")
		for _, wait := range futures {
			wait()
		}
		require.NoError(t, ex.Close(context.Background()))
	})
}

// fill holds n slots of ex with calls that wait for release.
func fill(t *testing.T, ex *Executor, n int, release <-chan struct{}) {
	t.Helper()
	for range n {
		_, err := Submit(context.Background(), ex, func(context.Context) (int, error) { <-release; return 0, nil })
		require.NoError(t, err)
	}
}

// closeAWindow plays the end of adaptive.MinSamples successful 20 ms calls,
// 200 ms after now: a window closes (the first window lasts 100 ms).
func closeAWindow(ex *Executor, a *adaptState) {
	now := ex.now() + int64(200*time.Millisecond)
	for range adaptive.MinSamples {
		a.observe(ex, int64(20*time.Millisecond), now, true)
	}
}

// OnChange is user code, run by the call whose end closed the window: it
// may read Stats and Reconfigure (it was called under the limiter's lock,
// which Stats takes: the call's future never resolved, and Close gave up).
// Real time: a goroutine blocked on a mutex is not durably blocked for
// synctest, and a bubble would hang rather than fail.
func TestAdaptiveOnChangeMayUseTheExecutor(t *testing.T) {
	var ex *Executor
	told := make(chan Stats, 1)
	ex, err := New("s", Config{Slots: 4, Adaptive: AdaptiveConfig{Max: 100, OnChange: func(_ string, from, to int, why string) {
		st := ex.Stats()
		assert.NoError(t, ex.Reconfigure(Config{Slots: 4, Adaptive: AdaptiveConfig{Max: 50}}))
		told <- st
	}}})
	require.NoError(t, err)
	release := make(chan struct{})
	fill(t, ex, 4, release) // the limit is in the way: slow start doubles it
	done := make(chan struct{})
	go func() {
		defer close(done)
		closeAWindow(ex, ex.adapt.Load())
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the call that closed the window is still in OnChange")
	}
	st := <-told
	assert.Equal(t, 8, st.Slots, "OnChange sees the new limit in force")
	assert.Equal(t, adaptive.ReasonSlowStart, st.LimitReason)
	assert.Equal(t, 50, ex.Stats().LimitMax, "its Reconfigure took")
	close(release)
	require.NoError(t, ex.Close(context.Background()))
}

// A call that ended just before a Reconfigure turned adaptive sizing off,
// and closes its window just after, must not put the limit back: the
// bulkhead keeps the new Slots. The interleaving is played in order: a is
// the state the ending call loaded before the Reconfigure.
func TestAdaptiveWindowAcrossReconfigureToStatic(t *testing.T) {
	ex, err := New("s", Config{Slots: 10, Adaptive: AdaptiveConfig{Max: 100}})
	require.NoError(t, err)
	release := make(chan struct{})
	fill(t, ex, 10, release)
	a := ex.adapt.Load()
	require.NoError(t, ex.Reconfigure(Config{Slots: 7}))
	closeAWindow(ex, a) // in the way: it would have doubled to 20
	st := ex.Stats()
	assert.Equal(t, 7, st.Slots)
	assert.False(t, st.Adaptive)
	close(release)
	require.NoError(t, ex.Close(context.Background()))
}

// A cut of the limit halves the calls that make the bulkhead stuck
// (needRunning): a "not stuck before" computed for the old limit must not
// hold, or a bulkhead stuck under the cut limit is refused as busy for up
// to the stuck threshold longer.
func TestAdaptiveCutAppliesToTheStuckCriterionAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ex, err := New("s", Config{Adaptive: AdaptiveConfig{Max: 64, Initial: 64}, InvocationTimeout: 5 * time.Second,
			Breaker: breaker.Config{ResetTimeout: 10 * time.Second}, Stuck: StuckConfig{MaxAge: time.Second}})
		require.NoError(t, err)
		release := make(chan struct{})
		fill(t, ex, 20, release)
		time.Sleep(1100 * time.Millisecond) // 20 calls older than the threshold
		fill(t, ex, 44, release)            // 44 young ones fill the 64 slots
		_, err = Submit(t.Context(), ex, func(context.Context) (int, error) { return 0, nil })
		require.ErrorIs(t, err, ErrBusy, "busy: 20 old calls are not half of 64")
		require.Equal(t, breaker.Closed, ex.Breaker().State())
		a := ex.adapt.Load()
		a.mu.Lock()
		a.lim.SetLimit(32) // a cut
		a.mu.Unlock()
		ex.resizeToLimit(a)
		time.Sleep(100 * time.Millisecond)
		_, err = Submit(t.Context(), ex, func(context.Context) (int, error) { return 0, nil })
		require.ErrorIs(t, err, ErrSaturated)
		assert.Equal(t, breaker.Open, ex.Breaker().State(), "stuck: 20 old calls are more than half of 32")
		close(release)
		require.NoError(t, ex.Close(context.Background()))
	})
}

// A Reconfigure that turns adaptive sizing on publishes the limit's state
// before it resizes the bulkhead to Initial: a window that closes in
// between (its Reconfigure's goroutine descheduled) must resize after it,
// or the bulkhead keeps Initial while the limit says otherwise until the
// limit next changes. The interleaving is played in order.
func TestAdaptiveWindowAcrossReconfigureToAdaptive(t *testing.T) {
	ex, err := New("s", Config{Slots: 7})
	require.NoError(t, err)
	release := make(chan struct{})
	fill(t, ex, 7, release) // the limit will be in the way: it doubles
	r, err := Config{Slots: 7, Adaptive: AdaptiveConfig{Max: 1000}}.check("s")
	require.NoError(t, err)
	size, fresh := ex.applyAdaptive(r) // apply, up to its Resize
	require.NotNil(t, fresh)
	done := make(chan struct{})
	go func() {
		defer close(done)
		closeAWindow(ex, ex.adapt.Load())
	}()
	time.Sleep(10 * time.Millisecond) // lets the window close first, if it can (it must wait)
	for _, w := range ex.resize(size, r.queue, r.lowWater) {
		w.Value.(promoter).promote()
	}
	fresh.sizeMu.Unlock()
	<-done
	got := ex.bh.Stats().Slots
	a := ex.adapt.Load()
	a.mu.Lock()
	want := a.lim.Limit()
	a.mu.Unlock()
	assert.Equal(t, 14, want, "the window doubled the limit")
	assert.Equal(t, want, got, "the bulkhead has the limit")
	close(release)
	require.NoError(t, ex.Close(context.Background()))
}

// TestHotWordsShareACacheLine: the three words a call writes between
// cores, the adaptive window, the count of active calls and the
// bulkhead's state, lie in one 64-byte line wherever the allocator puts an
// Executor: its size class (160 bytes) starts objects at 0 or 32 modulo
// 64 within a span, so the words must start at 0 to 8, or 32 to 40,
// modulo 64.
func TestHotWordsShareACacheLine(t *testing.T) {
	var ex Executor
	require.EqualValues(t, 160, unsafe.Sizeof(ex), "the size class the offsets below are reckoned for")
	first := unsafe.Offsetof(ex.adaptAcc)
	require.Equal(t, first+8, unsafe.Offsetof(ex.active), "adaptAcc, then active")
	require.Equal(t, first+16, unsafe.Offsetof(ex.bh), "then the bulkhead, whose first word is its state")
	for _, base := range []uintptr{0, 32} {
		start := (base + first) % 64
		assert.LessOrEqual(t, start+24, uintptr(64), "an Executor at %d modulo 64: the words start at %d of their line", base, start)
	}
}
