package breaker_test

import (
	"bytes"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/fuseboxtest"
)

func TestEvents(t *testing.T) {
	t.Run("one event per real transition with from, to, reason and time", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			rec := &fuseboxtest.Recorder{}
			b := newBreaker(t, breaker.Config{Name: "payments", ConsecutiveFailures: 2, ResetTimeout: 10 * time.Second, OnTransition: rec.Listen})
			start := time.Now()
			fail(b)
			time.Sleep(time.Second)
			fail(b)
			time.Sleep(10 * time.Second)
			fail(b) // probe fails
			time.Sleep(10 * time.Second)
			succeed(b) // probe succeeds
			b.Reset()  // closed → closed: no event
			b.Trip(breaker.Manual)
			b.Trip(breaker.Manual) // open → open: no event

			assert.Equal(t, []string{
				"closed>open:consecutive-failures",
				"open>half-open:reset-timeout",
				"half-open>open:probe-failed",
				"open>half-open:reset-timeout",
				"half-open>closed:probes-succeeded",
				"closed>open:manual",
			}, transitions(rec.Events()))
			first := rec.Events()[0]
			assert.Equal(t, "payments", first.Name)
			assert.Equal(t, start.Add(time.Second), first.Time)
			assert.Equal(t, time.Second, first.Duration, "time spent closed")
			assert.Equal(t, start.Add(11*time.Second), first.OpenUntil)
			assert.Equal(t, 10*time.Second, rec.Events()[1].Duration, "time spent open")
			for i, e := range rec.Events() {
				assert.Equal(t, uint64(i+1), e.Generation)
			}
			assert.Equal(t, "payments: closed → open (consecutive-failures)", first.String())
			st := b.Stats()
			assert.Equal(t, uint64(2), st.Transitions[breaker.ResetTimeout])
			assert.Equal(t, uint64(1), st.Transitions[breaker.ProbeFailed])
			assert.Equal(t, uint64(1), st.Transitions[breaker.Manual], "the trip: the reset of a closed breaker was no transition")
			assert.Zero(t, st.Transitions[breaker.NoReason], "no transition has no reason")
		})
	})

	t.Run("64 goroutines failing at the trip edge produce exactly one closed→open event", func(t *testing.T) {
		for range 50 {
			var opened atomic.Int32
			b := newBreaker(t, breaker.Config{ConsecutiveFailures: 5, OnTransition: func(e breaker.Event) {
				if e.To == breaker.Open {
					opened.Add(1)
				}
			}})
			permits := make([]breaker.Permit, 64)
			for i := range permits {
				p, err := b.Allow()
				require.NoError(t, err)
				permits[i] = p
			}
			var wg sync.WaitGroup
			start := make(chan struct{})
			for _, p := range permits {
				wg.Go(func() { <-start; p.Done(errBoom) })
			}
			close(start)
			wg.Wait()
			require.Equal(t, int32(1), opened.Load())
		}
	})

	t.Run("delivered in order and never concurrently, under racing transitions", func(t *testing.T) {
		var inside, overlaps atomic.Int32
		var mu sync.Mutex
		var gens []uint64
		b := newBreaker(t, breaker.Config{ConsecutiveFailures: 1, OnTransition: func(e breaker.Event) {
			if inside.Add(1) > 1 {
				overlaps.Add(1)
			}
			mu.Lock()
			gens = append(gens, e.Generation)
			mu.Unlock()
			inside.Add(-1)
		}})
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for i := range 2000 {
					switch (g + i) % 3 {
					case 0:
						fail(b)
					case 1:
						b.Reset()
					default:
						b.Trip(breaker.Manual)
					}
				}
			})
		}
		wg.Wait()
		assert.Zero(t, overlaps.Load(), "the listener never ran twice at once")
		require.NotEmpty(t, gens)
		for i, g := range gens {
			require.Equal(t, uint64(i+1), g, "event %d out of order", i)
		}
		assert.Equal(t, b.Stats().Generation, uint64(len(gens)), "every transition delivered")
	})

	t.Run("a listener may read and even transition the breaker", func(t *testing.T) {
		var b *breaker.Breaker
		var seen []string
		b = newBreaker(t, breaker.Config{ConsecutiveFailures: 1, OnTransition: func(e breaker.Event) {
			seen = append(seen, e.To.String()+"/"+b.State().String()+"/"+b.Stats().State.String())
			if e.To == breaker.Open {
				b.Reset() // re-enters: queued, delivered after this call returns
			}
		}})
		fail(b)
		assert.Equal(t, []string{"open/open/open", "closed/closed/closed"}, seen)
	})

	t.Run("a panicking listener is recovered and logged, and later deliveries go on", func(t *testing.T) {
		var logged bytes.Buffer
		prev := slog.Default()
		slog.SetDefault(slog.New(slog.NewTextHandler(&logged, nil)))
		defer slog.SetDefault(prev)
		calls := 0
		b := newBreaker(t, breaker.Config{ConsecutiveFailures: 1, OnTransition: func(e breaker.Event) {
			calls++
			if calls == 1 {
				panic("listener bug")
			}
		}})
		assert.NotPanics(t, func() { fail(b) }, "the caller is not hit by the listener's bug")
		assert.Equal(t, breaker.Open, b.State(), "the transition itself happened")
		assert.Contains(t, logged.String(), "listener bug")
		assert.Contains(t, logged.String(), "closed → open")
		b.Reset()
		assert.Equal(t, 2, calls)
	})

	t.Run("a listener that calls runtime.Goexit is logged, and deliveries go on", func(t *testing.T) {
		var logged bytes.Buffer
		prev := slog.Default()
		slog.SetDefault(slog.New(slog.NewTextHandler(&logged, nil)))
		defer slog.SetDefault(prev)
		rec := &fuseboxtest.Recorder{}
		var b *breaker.Breaker
		b = newBreaker(t, breaker.Config{ConsecutiveFailures: 1, OnTransition: func(e breaker.Event) {
			rec.Listen(e)
			if e.To == breaker.Open && e.Reason == breaker.ConsecutiveFailures {
				b.Reset()        // queued behind this event
				runtime.Goexit() // t.FailNow in a test's listener
			}
		}})
		exited := make(chan struct{})
		go func() {
			defer close(exited)
			fail(b)
		}()
		<-exited
		assert.Contains(t, logged.String(), "runtime.Goexit")
		assert.Equal(t, breaker.Closed, b.State())
		b.Trip(breaker.Manual)
		b.Reset()
		assert.Equal(t, []string{
			"closed>open:consecutive-failures",
			"open>closed:manual",
			"closed>open:manual",
			"open>closed:manual",
		}, transitions(rec.Events()), "the event queued during the Goexit, and the later ones, are delivered")
	})
}
