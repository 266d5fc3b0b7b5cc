package executor_test

import (
	"bytes"
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// literal is the rule before stuck-vs-busy: every saturation trips. Tests
// of the trip's mechanics (one event at the edge, probes, queues) use it so
// that a full bulkhead trips at once, without waiting for its calls to age.
var literal = executor.StuckConfig{TripOnAnySaturation: true}

// warm gives ex a latency history: n successful calls of d each.
func warm(t *testing.T, ex *executor.Executor, n int, d time.Duration) {
	t.Helper()
	for range n {
		_, err := executor.Do(t.Context(), ex, func(ctx context.Context) (int, error) {
			time.Sleep(d)
			return 0, nil
		})
		require.NoError(t, err)
	}
}

// fill submits n calls to s (hung) and waits until they are all inside.
func fill(t *testing.T, ex *executor.Executor, s *supplier, n int) {
	t.Helper()
	for range n {
		_, err := executor.Submit(t.Context(), ex, s.cooperative)
		require.NoError(t, err)
	}
	synctest.Wait()
}

func rejection(t *testing.T, err error) executor.Rejection {
	t.Helper()
	var rej *executor.RejectedError
	require.ErrorAs(t, err, &rej)
	if rej.Reason == executor.RejectedBusy {
		require.ErrorIs(t, err, executor.ErrBusy)
		require.NotErrorIs(t, err, executor.ErrSaturated, "a busy refusal trips nothing")
	} else {
		require.ErrorIs(t, err, executor.ErrSaturated)
		require.NotErrorIs(t, err, executor.ErrBusy)
	}
	return rej.Reason
}

func TestStuckOrBusy(t *testing.T) {
	const n = 4
	cfg := func(ev *events) executor.Config {
		return executor.Config{Slots: n, InvocationTimeout: 30 * time.Second,
			Breaker: breaker.Config{ResetTimeout: 45 * time.Second, OnTransition: ev.listen}}
	}

	t.Run("without history a full bulkhead is busy until its oldest call is half the timeout old", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ev := &events{}
			s := newSupplier()
			s.hang()
			defer s.unhang()
			ex := newExecutor(t, cfg(ev))
			fill(t, ex, s, n)
			for range 3 {
				_, err := executor.Submit(t.Context(), ex, s.cooperative)
				assert.Equal(t, executor.RejectedBusy, rejection(t, err))
			}
			time.Sleep(15*time.Second - time.Nanosecond)
			_, err := executor.Submit(t.Context(), ex, s.cooperative)
			assert.Equal(t, executor.RejectedBusy, rejection(t, err), "just under the ceiling")
			assert.Equal(t, breaker.Closed, ex.Breaker().State())
			st := ex.Stats()
			assert.Equal(t, uint64(4), st.Rejected.Busy)
			assert.Zero(t, st.Failures+st.Ignored, "a busy refusal is not an outcome of the supplier")

			time.Sleep(time.Nanosecond)
			_, err = executor.Submit(t.Context(), ex, s.cooperative)
			assert.Equal(t, executor.RejectedSaturated, rejection(t, err))
			assert.Equal(t, []string{"closed>open:saturation"}, ev.list())
		})
	})

	t.Run("with a 100 ms history the bulkhead is stuck about 0.8 s after its calls hang", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ev := &events{}
			s := newSupplier()
			ex := newExecutor(t, cfg(ev))
			warm(t, ex, 50, 100*time.Millisecond)
			st := ex.Stats()
			// The buckets are 25 % wide and report their upper bound.
			assert.InDelta(t, 100*time.Millisecond, st.LatencyP99, float64(2*time.Millisecond))
			assert.Equal(t, st.LatencyP50, st.LatencyP99)

			s.hang()
			defer s.unhang()
			fill(t, ex, s, n)
			time.Sleep(800 * time.Millisecond) // 8 × p99 ≈ 805 ms
			_, err := executor.Submit(t.Context(), ex, s.cooperative)
			assert.Equal(t, executor.RejectedBusy, rejection(t, err))
			time.Sleep(10 * time.Millisecond)
			_, err = executor.Submit(t.Context(), ex, s.cooperative)
			assert.Equal(t, executor.RejectedSaturated, rejection(t, err))
			assert.Equal(t, breaker.Open, ex.Breaker().State())
		})
	})

	t.Run("a slow supplier's calls are young for longer", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := newSupplier()
			ex := newExecutor(t, cfg(&events{}))
			warm(t, ex, 30, time.Second) // threshold 8 × 1.07 s (the bucket's top) = 8.6 s
			s.hang()
			defer s.unhang()
			fill(t, ex, s, n)
			time.Sleep(8 * time.Second)
			_, err := executor.Submit(t.Context(), ex, s.cooperative)
			assert.Equal(t, executor.RejectedBusy, rejection(t, err))
			time.Sleep(time.Second)
			_, err = executor.Submit(t.Context(), ex, s.cooperative)
			assert.Equal(t, executor.RejectedSaturated, rejection(t, err))
		})
	})

	t.Run("a fast supplier's calls are young for at least MinAge", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := newSupplier()
			ex := newExecutor(t, cfg(&events{}))
			warm(t, ex, 30, time.Millisecond) // 8 × p99 = 8 ms, below the 500 ms floor
			s.hang()
			defer s.unhang()
			fill(t, ex, s, n)
			time.Sleep(499 * time.Millisecond)
			_, err := executor.Submit(t.Context(), ex, s.cooperative)
			assert.Equal(t, executor.RejectedBusy, rejection(t, err))
			time.Sleep(time.Millisecond)
			_, err = executor.Submit(t.Context(), ex, s.cooperative)
			assert.Equal(t, executor.RejectedSaturated, rejection(t, err))
		})
	})

	t.Run("a caller's short deadline does not make a young call look old", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := newSupplier()
			s.hang()
			defer s.unhang()
			ex := newExecutor(t, cfg(&events{}))
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			for range n {
				_, err := executor.Submit(ctx, ex, s.cooperative)
				require.NoError(t, err)
			}
			// Its deadline is 10 s earlier than the executor's own: a
			// start read off the deadline would be 10 s in the past.
			time.Sleep(time.Second)
			_, err := executor.Submit(t.Context(), ex, s.cooperative)
			assert.Equal(t, executor.RejectedBusy, rejection(t, err))
		})
	})

	t.Run("an overdue call that ignores its context makes the bulkhead stuck", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := newSupplier()
			s.hang()
			defer s.unhang()
			ex := newExecutor(t, executor.Config{Slots: 2, InvocationTimeout: time.Second,
				Stuck:   executor.StuckConfig{MaxAge: time.Second},
				Breaker: breaker.Config{ConsecutiveFailures: -1, ResetTimeout: 2 * time.Second}})
			_, err := executor.Submit(t.Context(), ex, s.stubborn)
			require.NoError(t, err)
			time.Sleep(1100 * time.Millisecond) // overdue, its slot still held
			_, err = executor.Submit(t.Context(), ex, s.cooperative)
			require.NoError(t, err, "a young call takes the other slot")
			synctest.Wait()
			require.Equal(t, 1, ex.Stats().Overdue)
			_, err = executor.Submit(t.Context(), ex, s.cooperative)
			assert.Equal(t, executor.RejectedSaturated, rejection(t, err))
		})
	})

	t.Run("a full queue whose oldest call has waited long trips; a young one is busy", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := newSupplier()
			s.hang()
			defer s.unhang()
			ex := newExecutor(t, executor.Config{Slots: 1, Queue: 2, InvocationTimeout: 30 * time.Second,
				QueueTimeout: 30 * time.Second, Breaker: breaker.Config{ResetTimeout: 2 * time.Minute}})
			fill(t, ex, s, 3) // one running, two queued
			_, err := executor.Submit(t.Context(), ex, s.cooperative)
			assert.Equal(t, executor.RejectedBusy, rejection(t, err))
			time.Sleep(15 * time.Second)
			_, err = executor.Submit(t.Context(), ex, s.cooperative)
			assert.Equal(t, executor.RejectedQueueFull, rejection(t, err))
		})
	})

	t.Run("the literal rule trips on any saturation", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := newSupplier()
			s.hang()
			defer s.unhang()
			c := cfg(&events{})
			c.Stuck = literal
			ex := newExecutor(t, c)
			fill(t, ex, s, n)
			_, err := executor.Submit(t.Context(), ex, s.cooperative)
			assert.Equal(t, executor.RejectedSaturated, rejection(t, err))
		})
	})

	t.Run("MinAge equal to MaxAge fixes the age", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := newSupplier()
			ex := newExecutor(t, executor.Config{Slots: n, InvocationTimeout: 30 * time.Second,
				Stuck:   executor.StuckConfig{MinAge: 2 * time.Second, MaxAge: 2 * time.Second},
				Breaker: breaker.Config{ResetTimeout: time.Minute}})
			warm(t, ex, 30, 3*time.Second)
			s.hang()
			defer s.unhang()
			fill(t, ex, s, n)
			time.Sleep(1999 * time.Millisecond)
			_, err := executor.Submit(t.Context(), ex, s.cooperative)
			assert.Equal(t, executor.RejectedBusy, rejection(t, err))
			time.Sleep(time.Millisecond)
			_, err = executor.Submit(t.Context(), ex, s.cooperative)
			assert.Equal(t, executor.RejectedSaturated, rejection(t, err))
		})
	})
}

// A Reconfigure changes the timeouts of calls admitted later; the calls
// already running or queued keep theirs, and the stuck criterion measures
// each call from its own start.
func TestStuckAfterReconfigureMeasuresEachCallFromItsOwnStart(t *testing.T) {
	t.Run("a shorter invocation timeout still finds the old calls stuck", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			cfg := executor.Config{Slots: 2, InvocationTimeout: 30 * time.Second, Breaker: breaker.Config{ResetTimeout: time.Minute}}
			ex := newExecutor(t, cfg)
			s := newSupplier()
			s.hang()
			defer s.unhang()
			fill(t, ex, s, 2)
			cfg.InvocationTimeout = 4 * time.Second // the stuck age is now 2 s
			require.NoError(t, ex.Reconfigure(cfg))
			time.Sleep(3 * time.Second)
			_, err := executor.Submit(t.Context(), ex, s.cooperative)
			assert.Equal(t, executor.RejectedSaturated, rejection(t, err), "calls 3 s old, over the 2 s stuck age")
			assert.Equal(t, breaker.Open, ex.Breaker().State())
		})
	})
	t.Run("a longer queue timeout does not age the queued call", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			cfg := executor.Config{Slots: 1, Queue: 1, InvocationTimeout: 30 * time.Second, QueueTimeout: 2 * time.Second,
				Breaker: breaker.Config{ResetTimeout: 2 * time.Minute}}
			ex := newExecutor(t, cfg)
			s := newSupplier()
			s.hang()
			defer s.unhang()
			fill(t, ex, s, 2) // one running, one queued
			cfg.QueueTimeout = 60 * time.Second
			require.NoError(t, ex.Reconfigure(cfg))
			time.Sleep(100 * time.Millisecond)
			_, err := executor.Submit(t.Context(), ex, s.cooperative)
			assert.Equal(t, executor.RejectedBusy, rejection(t, err), "the queued call has waited 0.1 s")
			assert.Equal(t, breaker.Closed, ex.Breaker().State())
		})
	})
}

func TestLatencyStats(t *testing.T) {
	t.Run("zero without history", func(t *testing.T) {
		ex := newExecutor(t, executor.Config{})
		st := ex.Stats()
		assert.Zero(t, st.LatencyP50)
		assert.Zero(t, st.LatencyP99)
	})
	t.Run("median and p99 of a mix, within a bucket", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, executor.Config{InvocationTimeout: 10 * time.Second, Breaker: breaker.Config{ResetTimeout: time.Minute}})
			var i atomic.Int64
			for range 200 {
				_, err := executor.Do(t.Context(), ex, func(context.Context) (int, error) {
					d := 10 * time.Millisecond
					if i.Add(1)%50 == 0 { // 2 % are slow: p99 is slow
						d = time.Second
					}
					time.Sleep(d)
					return 0, nil
				})
				require.NoError(t, err)
			}
			st := ex.Stats()
			assert.InDelta(t, 10*time.Millisecond, st.LatencyP50, float64(2500*time.Microsecond))
			assert.InDelta(t, time.Second, st.LatencyP99, float64(250*time.Millisecond))
		})
	})
	t.Run("failures do not count", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, executor.Config{Breaker: breaker.Config{ConsecutiveFailures: -1}})
			for range 50 {
				_, err := executor.Do(t.Context(), ex, func(context.Context) (int, error) {
					time.Sleep(100 * time.Millisecond)
					return 0, errBoom
				})
				require.ErrorIs(t, err, errBoom)
			}
			assert.Zero(t, ex.Stats().LatencyP99)
		})
	})
}

func TestStuckConfigValidation(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stuck executor.StuckConfig
		want  string
	}{
		{"a multiple below one", executor.StuckConfig{Multiple: 0.5}, "Stuck.Multiple must be ≥ 1"},
		{"a negative floor", executor.StuckConfig{MinAge: -1}, "Stuck.MinAge must be ≥ 0"},
		{"a ceiling beyond the timeout", executor.StuckConfig{MaxAge: 2 * time.Second}, "Stuck.MaxAge must be in [0, InvocationTimeout (1s)]"},
		{"a floor above the ceiling", executor.StuckConfig{MinAge: 800 * time.Millisecond}, "Stuck.MinAge (800ms) must not exceed Stuck.MaxAge (500ms)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := executor.New("payments", executor.Config{Stuck: tc.stuck})
			require.Error(t, err)
			assert.ErrorContains(t, err, tc.want)
		})
	}
	t.Run("a floor above a short timeout's default ceiling is lowered to it", func(t *testing.T) {
		ex, err := executor.New("payments", executor.Config{InvocationTimeout: 200 * time.Millisecond})
		require.NoError(t, err)
		require.NoError(t, ex.Close(t.Context()))
	})
}

func TestBusyListener(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf bytes.Buffer
		logBusy := executor.LogBusy(slog.New(slog.NewTextHandler(&buf, nil)), time.Second)
		var got []executor.Busy
		s := newSupplier()
		s.hang()
		defer s.unhang()
		ex := newExecutor(t, executor.Config{Slots: 1, InvocationTimeout: 30 * time.Second,
			Breaker: breaker.Config{ResetTimeout: 45 * time.Second}, OnBusy: func(b executor.Busy) {
				got = append(got, b)
				logBusy(b)
				panic("a listener's panic stays in the listener")
			}})
		fill(t, ex, s, 1)
		for range 3 {
			_, err := executor.Submit(t.Context(), ex, s.cooperative)
			require.ErrorIs(t, err, executor.ErrBusy)
		}
		require.Len(t, got, 3)
		assert.Equal(t, executor.Busy{Supplier: "payments", Time: time.Now(), Slots: 1, StuckAfter: 15 * time.Second}, got[0])
		assert.Equal(t, 1, bytes.Count(buf.Bytes(), []byte("\n")), "one record per second: %s", buf.String())
		assert.Contains(t, buf.String(), "supplier=payments refused=1")
		time.Sleep(time.Second)
		_, err := executor.Submit(t.Context(), ex, s.cooperative)
		require.ErrorIs(t, err, executor.ErrBusy)
		assert.Contains(t, buf.String(), "refused=3", "the two held back and this one")
	})
}

func TestGroupMergesStuck(t *testing.T) {
	g, err := executor.NewGroup(executor.GroupConfig{
		Default:   executor.Config{Stuck: executor.StuckConfig{Multiple: 3}},
		Suppliers: map[string]executor.Config{"flaky": {Stuck: executor.StuckConfig{TripOnAnySaturation: true}}},
	})
	require.NoError(t, err)
	defer g.Close(context.Background())
	_, err = executor.NewGroup(executor.GroupConfig{
		Suppliers: map[string]executor.Config{"bad": {Stuck: executor.StuckConfig{Multiple: 0.1}}},
	})
	assert.ErrorContains(t, err, "executor: bad: Stuck.Multiple")
}
