package breaker_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/fuseboxtest"
)

func TestFailureRate(t *testing.T) {
	windows := map[string]breaker.Config{
		"count-based": {WindowSize: 20},
		"time-based":  {WindowDuration: time.Minute},
	}
	for name, w := range windows {
		cfg := func(rate float64, min int) breaker.Config {
			c := w
			c.ConsecutiveFailures, c.FailureRate, c.MinimumCalls = -1, rate, min
			return c
		}
		t.Run(name+": below the minimum number of calls it never trips", func(t *testing.T) {
			b := newBreaker(t, cfg(0.5, 10))
			for range 9 {
				fail(b)
			}
			assert.Equal(t, breaker.Closed, b.State())
			assert.Equal(t, 9, b.Stats().WindowFailures)
			fail(b)
			assert.Equal(t, breaker.Open, b.State(), "the tenth call reaches the minimum")
		})
		t.Run(name+": equality trips (3 of 10 at 0.3)", func(t *testing.T) {
			b := newBreaker(t, cfg(0.3, 10))
			for i := range 10 {
				if i%4 == 0 && i < 9 { // failures at 0, 4, 8
					fail(b)
				} else {
					succeed(b)
				}
			}
			assert.Equal(t, breaker.Open, b.State())
			assert.Equal(t, breaker.FailureRate, b.Stats().Reason)
		})
		t.Run(name+": a success can be the call that reaches the minimum", func(t *testing.T) {
			b := newBreaker(t, cfg(0.5, 4))
			fail(b)
			fail(b)
			succeed(b)
			assert.Equal(t, breaker.Closed, b.State())
			succeed(b)
			assert.Equal(t, breaker.Open, b.State(), "2 of 4")
		})
		t.Run(name+": every second call failing trips the rate rule, not the consecutive one", func(t *testing.T) {
			rate := newBreaker(t, cfg(0.5, 10))
			consecutive := newBreaker(t, breaker.Config{})
			for i := range 20 {
				for _, b := range []*breaker.Breaker{rate, consecutive} {
					if i%2 == 1 {
						fail(b)
					} else {
						succeed(b)
					}
				}
			}
			assert.Equal(t, breaker.Open, rate.State())
			assert.Equal(t, breaker.FailureRate, rate.Stats().Reason)
			assert.Equal(t, breaker.Closed, consecutive.State())
		})
	}

	t.Run("count-based: old calls slide out", func(t *testing.T) {
		b := newBreaker(t, breaker.Config{ConsecutiveFailures: -1, FailureRate: 0.5, MinimumCalls: 10, WindowSize: 10})
		for range 4 {
			fail(b)
		}
		for range 10 {
			succeed(b)
		}
		s := b.Stats()
		assert.Equal(t, 10, s.WindowCalls)
		assert.Zero(t, s.WindowFailures, "the four failures have slid out")
		for range 4 {
			fail(b)
		}
		assert.Equal(t, breaker.Closed, b.State(), "4 of 10")
		fail(b)
		assert.Equal(t, breaker.Open, b.State(), "5 of 10")
	})

	t.Run("time-based: old buckets age out", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := newBreaker(t, breaker.Config{ConsecutiveFailures: -1, FailureRate: 0.5, MinimumCalls: 4, WindowDuration: 10 * time.Second, WindowBuckets: 10})
			for range 3 {
				fail(b)
			}
			time.Sleep(9 * time.Second)
			assert.Equal(t, 3, b.Stats().WindowCalls, "still inside the window")
			time.Sleep(time.Second)
			assert.Zero(t, b.Stats().WindowCalls, "the first bucket aged out")
			succeed(b)
			fail(b)
			fail(b)
			assert.Equal(t, breaker.Closed, b.State(), "2 of 3: below the minimum")
			fail(b)
			assert.Equal(t, breaker.Open, b.State(), "3 of 4")
		})
	})
}

func TestSlowCallRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(t, breaker.Config{SlowCallRate: 0.5, SlowCallDuration: time.Second, MinimumCalls: 4, WindowSize: 10})
		slowCall := func(d time.Duration) {
			p, err := b.Allow()
			require.NoError(t, err)
			time.Sleep(d)
			p.Done(nil)
		}
		slowCall(999 * time.Millisecond)
		slowCall(time.Second)
		slowCall(10 * time.Millisecond)
		assert.Equal(t, 1, b.Stats().WindowSlowCalls, "exactly the threshold is slow")
		assert.Equal(t, breaker.Closed, b.State())
		slowCall(2 * time.Second)
		assert.Equal(t, breaker.Open, b.State(), "2 slow of 4 successes")
		assert.Equal(t, breaker.SlowCallRate, b.Stats().Reason)
	})
}

func TestErrorKinds(t *testing.T) {
	kinds := []breaker.KindRule{
		{Name: "timeout", Consecutive: 10, Match: func(err error) bool { return errors.Is(err, context.DeadlineExceeded) }},
		{Name: "refused", Consecutive: 3, Match: func(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }},
	}
	timeout := fmt.Errorf("charge: %w", context.DeadlineExceeded)
	refused := fmt.Errorf("dial: %w", syscall.ECONNREFUSED)
	do := func(b *breaker.Breaker, err error) {
		p, aerr := b.Allow()
		require.NoError(t, aerr)
		p.Done(err)
	}

	t.Run("10 timeouts in a row trip, 9 do not, though the general threshold is 5", func(t *testing.T) {
		b := newBreaker(t, breaker.Config{ErrorKinds: kinds})
		for range 9 {
			do(b, timeout)
		}
		assert.Equal(t, breaker.Closed, b.State())
		assert.Zero(t, b.Stats().ConsecutiveFailures, "kind failures stay out of the general count")
		do(b, timeout)
		s := b.Stats()
		assert.Equal(t, breaker.Open, s.State)
		assert.Equal(t, breaker.ErrorKind, s.Reason)
		assert.Equal(t, "timeout", s.Kind)
	})
	t.Run("3 refused connections trip; a success in between clears the count", func(t *testing.T) {
		rec := &fuseboxtest.Recorder{}
		b := newBreaker(t, breaker.Config{ErrorKinds: kinds, OnTransition: rec.Listen})
		do(b, refused)
		do(b, refused)
		do(b, nil)
		do(b, refused)
		do(b, refused)
		assert.Equal(t, breaker.Closed, b.State())
		do(b, refused)
		assert.Equal(t, breaker.Open, b.State())
		require.Len(t, rec.Events(), 1)
		assert.Equal(t, "refused", rec.Events()[0].Kind)
	})
	t.Run("other errors use the general rule", func(t *testing.T) {
		b := newBreaker(t, breaker.Config{ErrorKinds: kinds})
		for range 5 {
			do(b, errBoom)
		}
		assert.Equal(t, breaker.ConsecutiveFailures, b.Stats().Reason)
	})
}

// Issue 10.6: rates used to be rounded to millionths, so 2 failures of 3
// at FailureRate 2.0/3 (0.666667 after rounding) never tripped.
func TestRatesWrittenAsFractionsTripAtExactlyThatFraction(t *testing.T) {
	tests := []struct {
		name   string
		cfg    breaker.Config
		slow   bool
		reason breaker.Reason
	}{
		{"2 failures of 3 at FailureRate 2.0/3",
			breaker.Config{ConsecutiveFailures: -1, FailureRate: 2.0 / 3, MinimumCalls: 3, WindowSize: 3}, false, breaker.FailureRate},
		{"2 slow calls of 3 at SlowCallRate 2.0/3",
			breaker.Config{ConsecutiveFailures: -1, SlowCallRate: 2.0 / 3, SlowCallDuration: time.Second, MinimumCalls: 3, WindowSize: 3}, true, breaker.SlowCallRate},
		{"1 failure of 7 at FailureRate 1.0/7",
			breaker.Config{ConsecutiveFailures: -1, FailureRate: 1.0 / 7, MinimumCalls: 7, WindowSize: 7}, false, breaker.FailureRate},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := newBreaker(t, tt.cfg)
				calls := tt.cfg.MinimumCalls
				bad := int(math.Round(tt.cfg.FailureRate*float64(calls) + tt.cfg.SlowCallRate*float64(calls)))
				for i := range calls {
					p, err := b.Allow()
					require.NoError(t, err, "call %d", i)
					if i < bad {
						if tt.slow {
							time.Sleep(time.Second)
							p.Done(nil)
						} else {
							p.Done(errBoom)
						}
						continue
					}
					p.Done(nil)
				}
				assert.Equal(t, breaker.Open, b.State(), "got %v after %d bad calls of %d, want open", b.State(), bad, calls)
				assert.Equal(t, tt.reason, b.Stats().Reason)
			})
		})
	}
}
