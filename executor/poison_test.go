package executor_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// trips records when a breaker opened, counted from the start of a test.
type trips struct {
	mu    sync.Mutex
	start time.Time
	at    []time.Duration
}

func (tr *trips) listen(ev breaker.Event) {
	if ev.To != breaker.Open {
		return
	}
	tr.mu.Lock()
	tr.at = append(tr.at, ev.Time.Sub(tr.start))
	tr.mu.Unlock()
}

func (tr *trips) list() []time.Duration {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]time.Duration(nil), tr.at...)
}

// phase is a span of the supplier's life, from the test's start: stall
// holds every call until its end; hang holds every call until its
// deadline.
type phase struct {
	from, to time.Duration
	hang     bool
}

// drive submits 10 calls a second until end to a supplier that answers in
// 50 to 140 ms outside its phases (p99 about 140 ms), without awaiting them.
func drive(t *testing.T, ex *executor.Executor, start time.Time, end time.Duration, phases ...phase) {
	t.Helper()
	for i := 0; time.Since(start) < end; i++ {
		healthy := time.Duration(50+10*(i%10)) * time.Millisecond
		_, _ = executor.Submit(t.Context(), ex, func(ctx context.Context) (int, error) {
			now := time.Since(start)
			for _, p := range phases {
				switch {
				case now < p.from || now >= p.to:
				case p.hang:
					<-ctx.Done()
					return 0, ctx.Err()
				default:
					time.Sleep(p.to - now)
					return 0, nil
				}
			}
			time.Sleep(healthy)
			return 0, nil
		})
		time.Sleep(100 * time.Millisecond)
	}
}

// The stall's calls answer 15 s late, after the trip: their durations are
// in the duration histogram, but not in the history that tells stuck from
// busy, so the hang 200 s in trips as fast as a hang without a stall before.
func TestAStallDoesNotSlowTheDetectionOfTheNextHang(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &trips{start: time.Now()}
		ex := newExecutor(t, executor.Config{Slots: 10, InvocationTimeout: 30 * time.Second,
			Breaker: breaker.Config{ResetTimeout: 35 * time.Second, OnTransition: tr.listen}})
		stall := phase{from: 20 * time.Second, to: 35 * time.Second}
		drive(t, ex, tr.start, 60*time.Second, stall)

		st := ex.Stats()
		assert.Less(t, st.LatencyP99, 200*time.Millisecond, "the late results of the stall do not shape the history")
		require.NotEmpty(t, tr.list())
		assert.InDelta(t, 21.5, tr.list()[0].Seconds(), 1, "the stall trips")
		assert.Equal(t, breaker.Closed, st.Breaker.State, "the probe after the stall closed the breaker")
		late := st.Durations[breaker.Success]
		slow := late.Count - late.Buckets[len(late.Buckets)-1] // over 10 s
		assert.GreaterOrEqual(t, slow, uint64(5), "the late calls are in the duration histogram, at their real duration")

		drive(t, ex, tr.start, 212*time.Second, phase{from: 200 * time.Second, to: time.Hour, hang: true})
		got := tr.list()
		require.Len(t, got, 2, "the stall's trip and the hang's: %v", got)
		assert.InDelta(t, 201.5, got[1].Seconds(), 0.5, "the hang trips as if there had been no stall")
	})
}

// A probe that answers after 9 s (the supplier slow to come back) closes
// the breaker of a young supplier (30 successes before its first hang); its
// duration is not in the history, which would make it the p99 for the next
// 70 samples: the next hang, right after, would trip 15 s in, not 1.5 s.
func TestALongProbeDoesNotSlowTheDetectionOfTheNextHang(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &trips{start: time.Now()}
		ex := newExecutor(t, executor.Config{Slots: 10, InvocationTimeout: 30 * time.Second,
			Breaker: breaker.Config{ResetTimeout: 35 * time.Second, OnTransition: tr.listen}})
		drive(t, ex, tr.start, 3*time.Second)
		// Only the probe, 35 s after the trip, meets the slow recovery.
		drive(t, ex, tr.start, 50*time.Second, phase{from: 3 * time.Second, to: 33 * time.Second, hang: true},
			phase{from: 33 * time.Second, to: 48 * time.Second})
		require.Len(t, tr.list(), 1)
		assert.Equal(t, breaker.Closed, ex.Breaker().State())
		assert.Less(t, ex.Stats().LatencyP99, 200*time.Millisecond, "the probe's 9 s is not in the history")
		drive(t, ex, tr.start, 62*time.Second, phase{from: 50 * time.Second, to: time.Hour, hang: true})
		got := tr.list()
		require.Len(t, got, 2, "the first hang's trip and the second's: %v", got)
		assert.InDelta(t, got[0].Seconds()+47, got[1].Seconds(), 0.5, "the second hang trips as fast as the first: %v", got)
	})
}

// Calls admitted before a Reconfigure that shortened the invocation
// timeout, which answer later than the new timeout allows, would be
// timeouts now: their durations are not in the history.
func TestAnswersLongerThanANewTimeoutAreNotInTheHistory(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := executor.Config{Slots: 20, InvocationTimeout: 30 * time.Second, Breaker: breaker.Config{ResetTimeout: 35 * time.Second}}
		ex := newExecutor(t, cfg)
		warm(t, ex, 40, 100*time.Millisecond)
		var fs []func() error
		for range 10 {
			f, err := executor.Submit(t.Context(), ex, func(context.Context) (int, error) { time.Sleep(2 * time.Second); return 0, nil })
			require.NoError(t, err)
			fs = append(fs, func() error { _, err := f.Await(t.Context()); return err })
		}
		cfg.InvocationTimeout = time.Second
		require.NoError(t, ex.Reconfigure(cfg))
		for _, await := range fs {
			require.NoError(t, await(), "they keep the deadline they started with")
		}
		st := ex.Stats()
		assert.Less(t, st.LatencyP99, 200*time.Millisecond, "2 s answers are beyond the timeout now in force")
		assert.Equal(t, uint64(10), st.Durations[breaker.Success].Count-st.Durations[breaker.Success].Buckets[7], "in the histogram, over 1 s")
	})
}
