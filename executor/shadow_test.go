package executor_test

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// outage runs the shop outage against ex: 100 ms calls, then a hang at
// 10 calls/s for 5 s, submitting without awaiting. It returns the calls
// refused and the futures of those admitted.
func outage(t *testing.T, ex *executor.Executor, s *supplier) (refused int) {
	t.Helper()
	warm(t, ex, 50, 100*time.Millisecond)
	s.hang()
	for range 50 {
		if _, err := executor.Submit(t.Context(), ex, s.cooperative); err != nil {
			refused++
		}
		time.Sleep(100 * time.Millisecond)
	}
	return refused
}

func TestShadow(t *testing.T) {
	cfg := func(ev *events, shadow bool) executor.Config {
		return executor.Config{Slots: 10, InvocationTimeout: 30 * time.Second, Shadow: shadow,
			Breaker: breaker.Config{ResetTimeout: 45 * time.Second, OnTransition: ev.listen}}
	}

	t.Run("a hang trips the shadow breaker when enforce mode trips, and nothing is refused", func(t *testing.T) {
		var enforced, shadowed executor.Stats
		var enforcedEvents, shadowEvents []breaker.Event
		for _, shadow := range []bool{false, true} {
			synctest.Test(t, func(t *testing.T) {
				ev := &events{}
				s := newSupplier()
				defer s.unhang()
				ex := newExecutor(t, cfg(ev, shadow))
				refused := outage(t, ex, s)
				st := ex.Stats()
				if shadow {
					assert.Zero(t, refused, "shadow mode refuses nothing")
					assert.Equal(t, int64(50), s.inside.Load(), "every call of the hang reached the supplier")
					shadowed, shadowEvents = st, ev.all
				} else {
					assert.Equal(t, 40, refused)
					enforced, enforcedEvents = st, ev.all
				}
			})
		}
		require.Len(t, enforcedEvents, 1)
		require.Len(t, shadowEvents, 1)
		assert.Equal(t, enforcedEvents[0].Time.Sub(time.Time{}), shadowEvents[0].Time.Sub(time.Time{}), "same trip time")
		assert.Equal(t, breaker.Saturation, shadowEvents[0].Reason)
		assert.True(t, shadowEvents[0].Shadow)
		assert.False(t, enforcedEvents[0].Shadow)
		assert.Contains(t, shadowEvents[0].String(), "[shadow]")

		assert.Equal(t, enforced.Rejected, shadowed.Shadowed, "shadow counts what enforce refused, by reason")
		assert.Equal(t, executor.Rejections{}, shadowed.Rejected)
		assert.True(t, shadowed.Shadow)
		assert.Equal(t, enforced.Breaker.State, shadowed.Breaker.State)
		assert.Equal(t, 10, shadowed.InUse, "the calls run outside take no slot")
		assert.Zero(t, shadowed.Overdue)
	})

	t.Run("Reconfigure switches shadow to enforce: the open breaker refuses from the next call", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ev := &events{}
			s := newSupplier()
			defer s.unhang()
			ex := newExecutor(t, cfg(ev, true))
			outage(t, ex, s)
			_, err := executor.Submit(t.Context(), ex, s.cooperative)
			require.NoError(t, err, "shadow: the open breaker admits")
			require.NoError(t, ex.Reconfigure(cfg(ev, false)))
			_, err = executor.Submit(t.Context(), ex, s.cooperative)
			require.ErrorIs(t, err, breaker.ErrOpen)
			st := ex.Stats()
			assert.False(t, st.Shadow)
			assert.Equal(t, uint64(1), st.Rejected.Open)
			assert.Equal(t, uint64(40+1), st.Shadowed.Open+st.Shadowed.Saturated+st.Shadowed.Busy)
		})
	})

	t.Run("calls run outside the bulkhead keep their timeout, and Close waits for them", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex, err := executor.New("payments", executor.Config{Slots: 1, InvocationTimeout: time.Second, Shadow: true,
				Stuck: literal, Breaker: breaker.Config{ResetTimeout: time.Minute}})
			require.NoError(t, err)
			s := newSupplier()
			s.hang()
			f1, err := executor.Submit(t.Context(), ex, s.cooperative)
			require.NoError(t, err)
			f2, err := executor.Submit(t.Context(), ex, s.stubborn)
			require.NoError(t, err, "beyond the slots: runs all the same")
			assert.Equal(t, breaker.Open, ex.Breaker().State(), "the shadow breaker tripped")
			time.Sleep(time.Second)
			synctest.Wait()
			_, err = resultNow(f1)
			assert.ErrorIs(t, err, executor.ErrTimeout)
			time.Sleep(10 * time.Millisecond)
			synctest.Wait()
			_, err = resultNow(f2)
			assert.ErrorIs(t, err, executor.ErrTimeout, "the call outside timed out too")
			assert.Zero(t, ex.Stats().Overdue, "a call outside is never overdue: it holds no slot")
			ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
			defer cancel()
			assert.Error(t, ex.Close(ctx), "the stubborn call outside still runs")
			s.unhang()
			synctest.Wait()
			require.NoError(t, ex.Close(context.Background()))
		})
	})

	t.Run("the outcomes of calls run outside reach no breaker rule, and the probe decides", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ev := &events{}
			ex := newExecutor(t, executor.Config{Slots: 1, InvocationTimeout: time.Second, Shadow: true,
				Breaker: breaker.Config{ConsecutiveFailures: 1, ResetTimeout: 2 * time.Second, OnTransition: ev.listen}})
			ex.Breaker().Trip(breaker.Manual)
			for range 5 {
				_, err := executor.Do(t.Context(), ex, func(context.Context) (int, error) { return 0, errBoom })
				require.ErrorIs(t, err, errBoom, "run, and its error returned")
			}
			st := ex.Stats()
			assert.Zero(t, st.Breaker.Failures, "enforcing, those calls would not have happened")
			assert.Equal(t, uint64(5), st.Shadowed.Open)
			assert.Equal(t, uint64(5), st.Durations[breaker.Failure].Count, "they ran: their durations are there")
			time.Sleep(2 * time.Second)
			_, err := executor.Do(t.Context(), ex, func(context.Context) (int, error) { return 1, nil })
			require.NoError(t, err)
			assert.Equal(t, breaker.Closed, ex.Breaker().State(), "the probe closed the shadow breaker")
			assert.Equal(t, []string{"closed>open:manual", "open>half-open:reset-timeout", "half-open>closed:probes-succeeded"}, ev.list())
		})
	})

	t.Run("a group goes from shadow to enforce with Group.Reconfigure, and its listeners see shadow events", func(t *testing.T) {
		ev := &events{}
		def := executor.Config{Shadow: true, Breaker: breaker.Config{ResetTimeout: time.Hour}}
		g := newGroup(t, executor.GroupConfig{Default: def, OnTransition: ev.listen})
		ex, err := g.Executor("payments")
		require.NoError(t, err)
		ex.Breaker().Trip(breaker.Manual)
		_, err = executor.DoIn(context.Background(), g, "payments", func(context.Context) (int, error) { return 1, nil })
		require.NoError(t, err)
		def.Shadow = false
		require.NoError(t, g.Reconfigure(executor.GroupConfig{Default: def}))
		_, err = executor.DoIn(context.Background(), g, "payments", func(context.Context) (int, error) { return 1, nil })
		require.ErrorIs(t, err, breaker.ErrOpen)
		ex.Breaker().Reset()
		require.Len(t, ev.all, 2)
		assert.True(t, ev.all[0].Shadow, "the trip was the shadow breaker's")
		assert.False(t, ev.all[1].Shadow, "the reset, enforcing")
	})

	t.Run("LogTransitions says shadow", func(t *testing.T) {
		var buf bytes.Buffer
		ex, err := executor.New("payments", executor.Config{Shadow: true,
			Breaker: breaker.Config{OnTransition: executor.LogTransitions(slog.New(slog.NewTextHandler(&buf, nil)))}})
		require.NoError(t, err)
		defer ex.Close(context.Background())
		ex.Breaker().Trip(breaker.Manual)
		assert.Contains(t, buf.String(), "shadow breaker open (nothing refused)")
		assert.Contains(t, buf.String(), "shadow=true")
	})
}
