package executor_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
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
	t.Run("a supplier's entry is its whole configuration; the default serves the others", func(t *testing.T) {
		ev := &events{}
		def := executor.Config{Slots: 2, InvocationTimeout: time.Second, Breaker: breaker.Config{ConsecutiveFailures: 3}}
		payments := def // derived from the default in code
		payments.Queue, payments.InvocationTimeout, payments.Breaker.ResetTimeout = 4, 2*time.Second, time.Minute
		g := newGroup(t, executor.GroupConfig{
			Default: def,
			Suppliers: map[string]executor.Config{
				"search":   {Slots: 20}, // not derived: the rest is Config's defaults
				"payments": payments,
			},
			OnTransition: ev.listen,
		})
		for name, want := range map[string][2]int{"catalog": {2, 0}, "search": {20, 0}, "payments": {2, 4}} {
			ex, err := g.Executor(name)
			require.NoError(t, err)
			st := ex.Stats()
			assert.Equal(t, want[0], st.Slots, name)
			assert.Equal(t, want[1], st.QueueCap, name)
			again, err := g.Executor(name)
			require.NoError(t, err)
			assert.Same(t, ex, again, "one executor per name")
		}
		fail := func(name string, n int) *executor.Executor {
			ex, _ := g.Executor(name)
			for range n {
				executor.Do(t.Context(), ex, func(context.Context) (int, error) { return 0, errBoom })
			}
			return ex
		}
		assert.Equal(t, breaker.Open, fail("payments", 3).Breaker().State(), "payments copied the default's 3 consecutive failures")
		assert.Equal(t, breaker.Closed, fail("search", 3).Breaker().State(), "search did not inherit them: 5 is Config's default")
		require.Len(t, ev.all, 1)
		assert.Equal(t, "payments", ev.all[0].Name, "group events carry the supplier name")
	})

	t.Run("an invalid supplier is refused up front with its name", func(t *testing.T) {
		_, err := executor.NewGroup(executor.GroupConfig{
			Default:   executor.Config{InvocationTimeout: time.Second},
			Suppliers: map[string]executor.Config{"reports": {InvocationTimeout: time.Minute}},
		})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "reports: Breaker.ResetTimeout (5s) must exceed InvocationTimeout (1m0s)")

		_, err = executor.NewGroup(executor.GroupConfig{
			Suppliers: map[string]executor.Config{"search": {Breaker: breaker.Config{FailureRate: 2}}},
		})
		assert.ErrorContains(t, err, "executor: search: breaker: FailureRate must be in (0, 1]", "the breaker's own rules too, named")
	})

	t.Run("all executors share one pool: calls on many suppliers start no goroutine per supplier", func(t *testing.T) {
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

	t.Run("idle executors are evicted, closed, and come back fresh", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			g := newGroup(t, executor.GroupConfig{IdleTimeout: time.Minute})
			idle, err := g.Executor("host-a")
			require.NoError(t, err)
			_, err = executor.Do(t.Context(), idle, func(context.Context) (int, error) { return 1, nil })
			require.NoError(t, err)
			busy, _ := g.Executor("host-b")
			failing, _ := g.Executor("host-c")
			failing.Breaker().Trip(breaker.Manual) // an open breaker remembers a failing supplier

			names := g.Names
			for range 3 {
				time.Sleep(time.Minute)
				executor.Do(t.Context(), busy, func(context.Context) (int, error) { return 0, nil })
				g.Executor("host-b") // lookups drive the sweep
			}
			assert.Equal(t, []string{"host-b", "host-c"}, names(), "host-a evicted; host-b kept by its calls, host-c by its open breaker")

			_, err = executor.Submit(t.Context(), idle, func(context.Context) (int, error) { return 0, nil })
			assert.ErrorIs(t, err, executor.ErrClosed, "an evicted executor is closed: no two live executors for one name")
			v, err := executor.DoIn(t.Context(), g, "host-a", func(context.Context) (int, error) { return 7, nil })
			require.NoError(t, err, "DoIn looks the supplier up again")
			assert.Equal(t, 7, v)
			again, err := g.Executor("host-a")
			require.NoError(t, err)
			assert.NotSame(t, idle, again)
			assert.Equal(t, uint64(1), again.Stats().Successes, "a fresh executor")
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

// 10,000 idle suppliers: no goroutine at all, at most 512 B each, both
// before their first call and once they are idle again after one.
func TestGroupIdleFootprint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 10_000
		g, err := executor.NewGroup(executor.GroupConfig{OnTransition: func(breaker.Event) {}, MaxSuppliers: n})
		require.NoError(t, err)
		names := make([]string, n)
		for i := range names {
			names[i] = fmt.Sprintf("host-%05d.internal:443", i)
		}
		heap := func() uint64 {
			var m runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&m)
			return m.HeapAlloc
		}
		goroutines := runtime.NumGoroutine()
		before := heap()
		all := make([]*executor.Executor, n)
		for i, name := range names {
			all[i], err = g.Executor(name)
			require.NoError(t, err)
		}
		created := heap()
		t.Logf("heap per idle supplier: %d B (map entry included)", (created-before)/n)
		assert.LessOrEqual(t, (created-before)/n, uint64(512))
		assert.LessOrEqual(t, runtime.NumGoroutine(), goroutines, "no goroutine per supplier")

		for _, ex := range all {
			_, err := executor.Do(t.Context(), ex, func(context.Context) (int, error) { return 1, nil })
			require.NoError(t, err)
		}
		time.Sleep(2 * time.Second) // every deadline timer fires once more and retires
		// Inside a synctest bubble the runtime keeps some state of fired
		// timers, so this is logged, not asserted; timeline_test.go checks
		// that an idle executor holds no timeline or timer.
		t.Logf("heap per supplier idle again after one call: %d B", (heap()-before)/n)
		require.NoError(t, g.Close(context.Background()))
		runtime.KeepAlive(names)
	})
}

// An evicted executor whose timed-out call has returned while its timer
// goroutine is still inside a blocking classifier: later sweeps, lookups
// of new names and Group.Close must not wait for that classifier.
func TestASweepNeverWaitsForARetiredExecutorsClassifier(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const u = 50 * time.Millisecond
		unblock := make(chan struct{})
		g, err := executor.NewGroup(executor.GroupConfig{IdleTimeout: u, Default: executor.Config{
			InvocationTimeout: u, Breaker: breaker.Config{ResetTimeout: time.Minute,
				Classify: func(error) breaker.Outcome {
					<-unblock // a classifier waiting on a lock or a log sink
					return breaker.Failure
				}}}})
		require.NoError(t, err)
		_, err = executor.SubmitIn(context.Background(), g, "a", func(context.Context) (int, error) {
			time.Sleep(3 * u / 2) // ignores its context for a while
			return 1, nil
		})
		require.NoError(t, err)
		time.Sleep(2 * u) // the timer is in Classify since u; fn returned at 1.5u
		_, _ = g.Executor("b")
		time.Sleep(3 * u / 2)
		_, _ = g.Executor("b") // a is evicted: retired
		time.Sleep(3 * u / 2)
		swept := make(chan struct{})
		go func() {
			_, _ = g.Executor("c") // this sweep closes the retired a
			close(swept)
		}()
		synctest.Wait()
		select {
		case <-swept:
		default:
			close(unblock)
			<-swept
			t.Fatal("a lookup of a new name waits for a retired executor's classifier")
		}

		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		start := time.Now()
		err = g.Close(ctx)
		assert.ErrorIs(t, err, context.DeadlineExceeded, "Close says what it left behind")
		assert.Equal(t, 100*time.Millisecond, time.Since(start), "Group.Close returns by its deadline")
		close(unblock)
		<-swept
		synctest.Wait()
	})
}

// panickyRunner runs the tasks it is given on goroutines of their own,
// except the one numbered panicAt (from 1), for which it panics.
type panickyRunner struct {
	n       atomic.Int64
	panicAt int64
}

func (r *panickyRunner) Go(fn func()) error {
	if r.n.Add(1) == r.panicAt {
		panic("runner bug")
	}
	go fn()
	return nil
}

// misbehavingRunner breaks the Runner contract in the way its name says.
type misbehavingRunner string

func (r misbehavingRunner) Go(fn func()) error {
	switch r {
	case "runs twice":
		go fn()
		go fn()
	case "runs and refuses":
		go fn()
		return errors.New("pool full")
	case "runs and panics":
		go fn()
		panic("runner bug")
	}
	return nil
}

// TestARunnerThatRunsACallTwiceRunsItOnce: a Runner that runs a task twice,
// or runs it and also refuses it (an error or a panic), still has each
// call finished once: by its run or by the refusal, whichever comes first,
// and a later run does nothing. Settled twice, a call would give its slot
// back twice, which panics on the Runner's goroutine and ends the process.
func TestARunnerThatRunsACallTwiceRunsItOnce(t *testing.T) {
	for _, r := range []misbehavingRunner{"runs twice", "runs and refuses", "runs and panics"} {
		t.Run(string(r), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := newGroup(t, executor.GroupConfig{Runner: r, Default: executor.Config{Slots: 2}})
				var ran atomic.Int32
				succeeded := 0
				for i := range 10 {
					v, err := executor.DoIn(context.Background(), g, "a", func(context.Context) (int, error) {
						ran.Add(1)
						return i, nil
					})
					if err == nil {
						succeeded++
						assert.Equal(t, i, v)
					}
					synctest.Wait() // the Runner's tasks have all run by now
				}
				ex, _ := g.Executor("a")
				s := ex.Stats()
				assert.Zero(t, s.InUse, "every slot given back, once")
				assert.EqualValues(t, succeeded, ran.Load(), "a call ran once if it succeeded, else not at all")
				assert.EqualValues(t, succeeded, s.Successes)
				if r == "runs twice" {
					assert.Equal(t, 10, succeeded)
				}
			})
		})
	}
}

func TestARunnerThatPanicsEndsTheCallWithAPanicError(t *testing.T) {
	requireRunnerPanic := func(t *testing.T, err error) {
		t.Helper()
		var pe *breaker.PanicError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, "GroupConfig.Runner.Go", pe.Callback)
		assert.Equal(t, "runner bug", pe.Value)
	}
	t.Run("on Submit, the slot is given back", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			g := newGroup(t, executor.GroupConfig{Runner: &panickyRunner{panicAt: 1}, Default: executor.Config{Slots: 1}})
			f, err := executor.SubmitIn(context.Background(), g, "a", func(context.Context) (int, error) { return 1, nil })
			require.NoError(t, err)
			_, err = f.Await(context.Background())
			requireRunnerPanic(t, err)
			ex, _ := g.Executor("a")
			s := ex.Stats()
			assert.Equal(t, 0, s.InUse, "slots held")
			assert.Equal(t, uint64(1), s.Panics)
			assert.Equal(t, uint64(1), s.Ignored, "the supplier was never asked")
			v, err := executor.DoIn(context.Background(), g, "a", func(context.Context) (int, error) { return 2, nil })
			require.NoError(t, err, "the next call gets the slot")
			assert.Equal(t, 2, v)
		})
	})
	t.Run("on promoting a queued call, inside the previous call's finish", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			g := newGroup(t, executor.GroupConfig{Runner: &panickyRunner{panicAt: 2}, Default: executor.Config{Slots: 1, Queue: 1}})
			gate := make(chan struct{})
			f1, err := executor.SubmitIn(context.Background(), g, "a", func(context.Context) (int, error) { <-gate; return 1, nil })
			require.NoError(t, err)
			f2, err := executor.SubmitIn(context.Background(), g, "a", func(context.Context) (int, error) { return 2, nil })
			require.NoError(t, err, "queued")
			close(gate)
			v, err := f1.Await(context.Background())
			require.NoError(t, err)
			assert.Equal(t, 1, v)
			_, err = f2.Await(context.Background())
			requireRunnerPanic(t, err)
			ex, _ := g.Executor("a")
			s := ex.Stats()
			assert.Equal(t, 0, s.InUse, "slots held")
			assert.Equal(t, 0, s.Queued)
			assert.Equal(t, uint64(1), s.Successes)
			assert.Equal(t, uint64(1), s.Panics)
		})
	})
}
