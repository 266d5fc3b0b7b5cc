package executor_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

func newGroup(t *testing.T, cfg executor.GroupConfig) *executor.Group {
	t.Helper()
	g, err := executor.NewGroup(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, g.Close(context.Background())) })
	return g
}

// Acceptance 9.
func TestGroup(t *testing.T) {
	t.Run("per-dependency sizes and settings override the default field by field", func(t *testing.T) {
		ev := &events{}
		g := newGroup(t, executor.GroupConfig{
			Default: executor.Config{Workers: 2, InvocationTimeout: time.Second, Breaker: breaker.Config{ConsecutiveFailures: 3}},
			Dependencies: map[string]executor.Config{
				"search":   {Workers: 20},
				"payments": {Queue: 4, InvocationTimeout: 2 * time.Second, Breaker: breaker.Config{ResetTimeout: time.Minute}},
			},
			OnTransition: ev.listen,
		})
		for name, want := range map[string][2]int{"catalog": {2, 0}, "search": {20, 0}, "payments": {2, 4}} {
			ex, err := g.Executor(name)
			require.NoError(t, err)
			st := ex.Stats()
			assert.Equal(t, want[0], st.Workers, name)
			assert.Equal(t, want[1], st.QueueCap, name)
			again, err := g.Executor(name)
			require.NoError(t, err)
			assert.Same(t, ex, again, "one executor per name")
		}
		pay, _ := g.Executor("payments")
		for range 3 {
			executor.Do(t.Context(), pay, func(context.Context) (int, error) { return 0, errBoom })
		}
		assert.Equal(t, breaker.Open, pay.Breaker().State(), "the default's 3 consecutive failures still apply")
		require.Len(t, ev.all, 1)
		assert.Equal(t, "payments", ev.all[0].Name, "group events carry the dependency name")
	})

	t.Run("an invalid dependency is refused up front with its name", func(t *testing.T) {
		_, err := executor.NewGroup(executor.GroupConfig{
			Default:      executor.Config{InvocationTimeout: time.Second},
			Dependencies: map[string]executor.Config{"reports": {InvocationTimeout: time.Minute}},
		})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "reports: Breaker.ResetTimeout (5s) must exceed InvocationTimeout (1m0s)")
	})

	t.Run("all executors share one pool: calls on many dependencies start no goroutine per dependency", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			g := newGroup(t, executor.GroupConfig{})
			before := runtime.NumGoroutine()
			for i := range 200 {
				ex, err := g.Executor(fmt.Sprint("host-", i))
				require.NoError(t, err)
				_, err = executor.Do(t.Context(), ex, func(context.Context) (int, error) { return i, nil })
				require.NoError(t, err)
			}
			// One pool's housekeeping and a few idle workers, not 200 of anything.
			assert.Less(t, runtime.NumGoroutine()-before, 20)
		})
	})

	t.Run("idle executors are evicted and come back fresh", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			g := newGroup(t, executor.GroupConfig{IdleTimeout: time.Minute})
			host, err := g.Executor("host-a")
			require.NoError(t, err)
			host.Breaker().Trip(breaker.Manual)
			busy, _ := g.Executor("host-b")

			count := func() int {
				n := 0
				g.Range(func(*executor.Executor) bool { n++; return true })
				return n
			}
			for range 3 {
				time.Sleep(time.Minute)
				executor.Do(t.Context(), busy, func(context.Context) (int, error) { return 0, nil })
				g.Executor("host-b") // lookups drive the sweep
			}
			assert.Equal(t, 1, count(), "host-a evicted, host-b kept by its calls")
			again, err := g.Executor("host-a")
			require.NoError(t, err)
			assert.NotSame(t, host, again)
			assert.Equal(t, breaker.Closed, again.Breaker().State(), "a fresh executor")
			b2, _ := g.Executor("host-b")
			assert.Same(t, busy, b2)
		})
	})

	t.Run("Close closes every executor and the pool", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			g, err := executor.NewGroup(executor.GroupConfig{})
			require.NoError(t, err)
			ex, _ := g.Executor("x")
			_, err = executor.Do(t.Context(), ex, func(context.Context) (int, error) { return 0, nil })
			require.NoError(t, err)
			require.NoError(t, g.Close(context.Background()))
			_, err = g.Executor("y")
			assert.ErrorIs(t, err, executor.ErrClosed)
			_, err = executor.Submit(t.Context(), ex, func(context.Context) (int, error) { return 0, nil })
			assert.ErrorIs(t, err, executor.ErrClosed)
		})
	})
}

// 10,000 idle dependencies: no goroutine at all, at most 512 B each.
func TestGroupIdleFootprint(t *testing.T) {
	const n = 10_000
	g := newGroup(t, executor.GroupConfig{OnTransition: func(breaker.Event) {}})
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("host-%05d.internal:443", i)
	}
	goroutines := runtime.NumGoroutine()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, name := range names {
		_, err := g.Executor(name)
		require.NoError(t, err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := (after.HeapAlloc - before.HeapAlloc) / n
	t.Logf("heap per idle dependency: %d B (map entry included)", per)
	assert.LessOrEqual(t, per, uint64(512))
	assert.LessOrEqual(t, runtime.NumGoroutine(), goroutines, "no goroutine per dependency")
	runtime.KeepAlive(names)
}
