package breaker_test

import (
	"context"
	"errors"
	"fmt"
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

func TestConsecutiveFailures(t *testing.T) {
	t.Run("all calls failing: the function runs exactly 5 times and the 6th fails fast", func(t *testing.T) {
		b := newBreaker(t, breaker.Config{})
		calls := 0
		for range 10 {
			call(b, func() error { calls++; return errBoom })
		}
		assert.Equal(t, 5, calls, "supplier calls")
		_, err := b.Allow()
		assert.ErrorIs(t, err, breaker.ErrOpen)
		assert.Equal(t, breaker.Open, b.State())
		s := b.Stats()
		assert.Equal(t, breaker.ConsecutiveFailures, s.Reason)
		assert.Equal(t, uint64(5), s.Failures)
		assert.Equal(t, uint64(6), s.Rejected)
	})
	t.Run("a success clears the count: F F S F F F stays closed", func(t *testing.T) {
		b := newBreaker(t, breaker.Config{})
		for _, f := range []bool{true, true, false, true, true, true} {
			if f {
				fail(b)
			} else {
				succeed(b)
			}
		}
		assert.Equal(t, breaker.Closed, b.State())
		assert.Equal(t, 3, b.Stats().ConsecutiveFailures)
	})
	t.Run("a custom threshold", func(t *testing.T) {
		b := newBreaker(t, breaker.Config{ConsecutiveFailures: 2})
		fail(b)
		assert.Equal(t, breaker.Closed, b.State())
		fail(b)
		assert.Equal(t, breaker.Open, b.State())
	})
	t.Run("-1 turns the rule off", func(t *testing.T) {
		b := newBreaker(t, breaker.Config{ConsecutiveFailures: -1})
		for range 1000 {
			fail(b)
		}
		assert.Equal(t, breaker.Closed, b.State())
	})
	t.Run("ignored outcomes neither count nor clear", func(t *testing.T) {
		b := newBreaker(t, breaker.Config{})
		for range 4 {
			fail(b)
		}
		p, err := b.Allow()
		require.NoError(t, err)
		p.Done(context.Canceled)
		assert.Equal(t, 4, b.Stats().ConsecutiveFailures)
		fail(b)
		assert.Equal(t, breaker.Open, b.State())
	})
}

func TestClassification(t *testing.T) {
	errDeclined := errors.New("card declined")
	tests := []struct {
		name     string
		classify func(error) breaker.Outcome
		err      error
		want     breaker.Outcome
	}{
		{"nil is a success", nil, nil, breaker.Success},
		{"the caller's context.Canceled is ignored", nil, fmt.Errorf("charge: %w", context.Canceled), breaker.Ignored},
		{"a deadline is a failure", nil, context.DeadlineExceeded, breaker.Failure},
		{"any other error is a failure", nil, errBoom, breaker.Failure},
		{"a business error can count as a success", businessAs(errDeclined, breaker.Success), errDeclined, breaker.Success},
		{"a business error can be ignored", businessAs(errDeclined, breaker.Ignored), errDeclined, breaker.Ignored},
		{"a custom classifier still sees real failures", businessAs(errDeclined, breaker.Success), errBoom, breaker.Failure},
		{"nil never reaches the classifier", func(error) breaker.Outcome { return breaker.Failure }, nil, breaker.Success},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBreaker(t, breaker.Config{ConsecutiveFailures: 1, Classify: tt.classify})
			p, err := b.Allow()
			require.NoError(t, err)
			p.Done(tt.err)
			s := b.Stats()
			got := breaker.Success
			switch {
			case s.Failures == 1:
				got = breaker.Failure
			case s.Ignored == 1:
				got = breaker.Ignored
			}
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.want == breaker.Failure, b.State() == breaker.Open, "a failure trips a threshold of 1")
		})
	}
}

func businessAs(target error, o breaker.Outcome) func(error) breaker.Outcome {
	return func(err error) breaker.Outcome {
		if errors.Is(err, target) {
			return o
		}
		return breaker.DefaultClassify(err)
	}
}

func TestLazyRecovery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(t, breaker.Config{ConsecutiveFailures: 1, ResetTimeout: 30 * time.Second})
		fail(b)
		opened := time.Now()
		assert.Equal(t, opened.Add(30*time.Second), b.Stats().OpenUntil)

		time.Sleep(30*time.Second - time.Nanosecond)
		_, err := b.Allow()
		require.ErrorIs(t, err, breaker.ErrOpen, "one nanosecond early")
		assert.Equal(t, breaker.Open, b.State(), "nothing moves the breaker but a caller")

		time.Sleep(time.Nanosecond)
		assert.Equal(t, breaker.Open, b.State(), "still open until someone asks: recovery is lazy")
		p, err := b.Allow()
		require.NoError(t, err, "the reset timeout has passed: the probe is admitted")
		assert.True(t, p.Probe())
		assert.Equal(t, breaker.HalfOpen, b.State())
		assert.Equal(t, breaker.ResetTimeout, b.Stats().Reason)
		p.Done(nil)
		assert.Equal(t, breaker.Closed, b.State())
		assert.Equal(t, breaker.ProbesSucceeded, b.Stats().Reason)
	})
}

func TestHalfOpen(t *testing.T) {
	for _, probes := range []int{1, 3} {
		t.Run(fmt.Sprintf("admits exactly %d probes when 64 goroutines race", probes), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := newBreaker(t, breaker.Config{ConsecutiveFailures: 1, HalfOpenProbes: probes, ResetTimeout: time.Second})
				fail(b)
				time.Sleep(time.Second)
				var admitted, rejected atomic.Int32
				permits := make(chan breaker.Permit, 64)
				var wg sync.WaitGroup
				for range 64 {
					wg.Go(func() {
						p, err := b.Allow()
						if err != nil {
							rejected.Add(1)
							return
						}
						admitted.Add(1)
						permits <- p
					})
				}
				wg.Wait()
				close(permits)
				assert.Equal(t, int32(probes), admitted.Load())
				assert.Equal(t, int32(64-probes), rejected.Load())

				i := 0
				for p := range permits {
					i++
					assert.Equal(t, breaker.HalfOpen, b.State(), "closes only when all %d probes succeeded", probes)
					p.Done(nil)
				}
				assert.Equal(t, breaker.Closed, b.State())
			})
		})
	}

	t.Run("success closes and clears the window", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := newBreaker(t, breaker.Config{ConsecutiveFailures: -1, FailureRate: 0.5, MinimumCalls: 4, WindowSize: 10, ResetTimeout: time.Second})
			for range 4 {
				fail(b)
			}
			require.Equal(t, breaker.Open, b.State())
			time.Sleep(time.Second)
			require.NoError(t, succeed(b))
			s := b.Stats()
			assert.Equal(t, breaker.Closed, s.State)
			assert.Zero(t, s.WindowCalls, "the window starts empty")
			// Were the four old failures still there, 4 of 5 would trip.
			fail(b)
			assert.Equal(t, breaker.Closed, b.State())
		})
	})

	t.Run("a failed probe re-opens and restarts the timer", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := newBreaker(t, breaker.Config{ConsecutiveFailures: 1, ResetTimeout: 10 * time.Second})
			fail(b)
			time.Sleep(10 * time.Second)
			require.NoError(t, fail(b), "the probe ran")
			s := b.Stats()
			assert.Equal(t, breaker.Open, s.State)
			assert.Equal(t, breaker.ProbeFailed, s.Reason)
			assert.Equal(t, time.Now().Add(10*time.Second), s.OpenUntil)
			time.Sleep(10*time.Second - time.Nanosecond)
			_, err := b.Allow()
			assert.ErrorIs(t, err, breaker.ErrOpen)
		})
	})

	t.Run("an ignored probe gives its place to the next caller", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := newBreaker(t, breaker.Config{ConsecutiveFailures: 1, ResetTimeout: time.Second})
			fail(b)
			time.Sleep(time.Second)
			p, err := b.Allow()
			require.NoError(t, err)
			_, err = b.Allow()
			require.ErrorIs(t, err, breaker.ErrOpen, "the only place is taken")
			p.Done(context.Canceled)
			assert.Equal(t, breaker.HalfOpen, b.State(), "an ignored probe decides nothing")
			p2, err := b.Allow()
			require.NoError(t, err, "the place is free again")
			p2.Done(nil)
			assert.Equal(t, breaker.Closed, b.State())
		})
	})

	t.Run("a probe that found no slot defers without counting an attempt", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := newBreaker(t, breaker.Config{ConsecutiveFailures: 1, ResetTimeout: 10 * time.Second, MaxResetTimeout: time.Minute})
			fail(b)
			time.Sleep(10 * time.Second)
			p, err := b.Allow()
			require.NoError(t, err)
			p.Reject(breaker.Saturation)
			s := b.Stats()
			assert.Equal(t, breaker.Open, s.State)
			assert.Equal(t, breaker.ProbeDeferred, s.Reason)
			assert.Equal(t, 1, s.Attempts, "no back-off for a deferral")
			assert.Equal(t, time.Now().Add(10*time.Second), s.OpenUntil, "a fresh open period")
		})
	})
}

func TestBackoff(t *testing.T) {
	t.Run("linear back-off capped at MaxResetTimeout over repeated cycles", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := newBreaker(t, breaker.Config{ConsecutiveFailures: 1, ResetTimeout: 10 * time.Second, MaxResetTimeout: 35 * time.Second})
			fail(b)
			want := []time.Duration{10, 20, 30, 35, 35, 35}
			for i, w := range want {
				w *= time.Second
				s := b.Stats()
				require.Equal(t, breaker.Open, s.State)
				assert.Equal(t, w, s.OpenUntil.Sub(s.Since), "open period %d", i+1)
				time.Sleep(w - time.Nanosecond)
				_, err := b.Allow()
				require.ErrorIs(t, err, breaker.ErrOpen, "cycle %d: early", i+1)
				time.Sleep(time.Nanosecond)
				require.NoError(t, fail(b), "cycle %d: the probe runs and fails", i+1)
			}
			time.Sleep(35 * time.Second)
			require.NoError(t, succeed(b))
			assert.Equal(t, breaker.Closed, b.State())
			fail(b)
			s := b.Stats()
			assert.Equal(t, 10*time.Second, s.OpenUntil.Sub(s.Since), "a close resets the back-off")
		})
	})
	t.Run("jitter only lengthens, by at most the fraction, and varies", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := newBreaker(t, breaker.Config{ConsecutiveFailures: 1, ResetTimeout: 10 * time.Second, ResetJitter: 0.5})
			seen := map[time.Duration]bool{}
			for range 50 {
				fail(b)
				s := b.Stats()
				d := s.OpenUntil.Sub(s.Since)
				require.GreaterOrEqual(t, d, 10*time.Second)
				require.LessOrEqual(t, d, 15*time.Second)
				seen[d] = true
				time.Sleep(d)
				require.NoError(t, succeed(b))
			}
			assert.Greater(t, len(seen), 10, "periods should differ")
		})
	})
}

func TestGenerations(t *testing.T) {
	for _, late := range []error{nil, errBoom} {
		t.Run(fmt.Sprintf("a permit from before the trip finishing in half-open (%v) decides nothing", late), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec := &fuseboxtest.Recorder{}
				b := newBreaker(t, breaker.Config{ConsecutiveFailures: 1, ResetTimeout: 10 * time.Second, OnTransition: rec.Listen})
				old, err := b.Allow()
				require.NoError(t, err)
				fail(b)
				time.Sleep(10 * time.Second)
				probe, err := b.Allow()
				require.NoError(t, err)
				require.Equal(t, breaker.HalfOpen, b.State())

				old.Done(late)
				assert.Equal(t, breaker.HalfOpen, b.State(), "the late result neither closes nor re-opens")
				assert.Equal(t, uint64(1), b.Stats().Late)
				assert.Equal(t, []string{"closed>open:consecutive-failures", "open>half-open:reset-timeout"}, transitions(rec.Events()))

				probe.Done(nil)
				assert.Equal(t, breaker.Closed, b.State(), "the probe decides")
			})
		})
		t.Run(fmt.Sprintf("a permit from before the trip finishing while open (%v) does not extend it", late), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := newBreaker(t, breaker.Config{ConsecutiveFailures: 1, ResetTimeout: 10 * time.Second})
				old, err := b.Allow()
				require.NoError(t, err)
				fail(b)
				until := b.Stats().OpenUntil
				time.Sleep(5 * time.Second)
				old.Done(late)
				s := b.Stats()
				assert.Equal(t, until, s.OpenUntil)
				assert.Equal(t, uint64(1), s.Generation, "no second transition")
				assert.Equal(t, uint64(1), s.Late)
			})
		})
	}
	t.Run("a late result does not count towards the next closed period", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := newBreaker(t, breaker.Config{ConsecutiveFailures: 2, ResetTimeout: time.Second})
			old, _ := b.Allow()
			fail(b)
			fail(b)
			time.Sleep(time.Second)
			require.NoError(t, succeed(b))
			old.Done(errBoom)
			assert.Zero(t, b.Stats().ConsecutiveFailures)
		})
	})
}

func TestOperatorControls(t *testing.T) {
	t.Run("Trip opens with the given reason and Reset closes", func(t *testing.T) {
		rec := &fuseboxtest.Recorder{}
		b := newBreaker(t, breaker.Config{OnTransition: rec.Listen})
		b.Trip(breaker.Manual)
		assert.Equal(t, breaker.Open, b.State())
		b.Trip(breaker.Manual)
		b.Reset()
		assert.Equal(t, breaker.Closed, b.State())
		assert.Equal(t, []string{"closed>open:manual", "open>closed:manual"}, transitions(rec.Events()))
	})
	t.Run("Trip with a reason that opens no breaker is an error and changes nothing", func(t *testing.T) {
		rec := &fuseboxtest.Recorder{}
		b := newBreaker(t, breaker.Config{OnTransition: rec.Listen})
		for _, r := range []breaker.Reason{0, breaker.ResetTimeout, breaker.ProbesSucceeded, breaker.QueueDrained, breaker.Reason(15), breaker.Reason(255)} {
			err := b.Trip(r)
			require.Error(t, err, "Trip(%v)", r)
			assert.Contains(t, err.Error(), r.String())
		}
		assert.Equal(t, breaker.Closed, b.State())
		assert.Empty(t, rec.Events())
		assert.Zero(t, b.Stats().Transitions)
		for _, r := range []breaker.Reason{breaker.Manual, breaker.Saturation, breaker.QueueFull, breaker.Remote} {
			require.NoError(t, b.Trip(r), "Trip(%v)", r)
			assert.Equal(t, r, b.Stats().Reason)
			b.Reset()
		}
	})
	t.Run("Reject with a reason that opens no breaker is an Ignore", func(t *testing.T) {
		for _, r := range []breaker.Reason{0, breaker.ResetTimeout, breaker.ProbesSucceeded, breaker.QueueDrained, breaker.Reason(15), breaker.Reason(255)} {
			rec := &fuseboxtest.Recorder{}
			b := newBreaker(t, breaker.Config{OnTransition: rec.Listen})
			p, err := b.Allow()
			require.NoError(t, err)
			require.NotPanics(t, func() { p.Reject(r) }, "Reject(%v)", r)
			assert.Equal(t, breaker.Closed, b.State(), "Reject(%v)", r)
			assert.Empty(t, rec.Events(), "Reject(%v)", r)
			assert.Zero(t, b.Stats().Transitions, "Reject(%v)", r)
			assert.Equal(t, uint64(1), b.Stats().Ignored, "Reject(%v)", r)
		}
	})
	t.Run("every operator action has reason Manual; the new state says which", func(t *testing.T) {
		rec := &fuseboxtest.Recorder{}
		b := newBreaker(t, breaker.Config{OnTransition: rec.Listen})
		b.ForceOpen()
		b.Reset()
		b.Disable()
		b.Reset()
		assert.Equal(t, []string{"closed>forced-open:manual", "forced-open>closed:manual",
			"closed>disabled:manual", "disabled>closed:manual"}, transitions(rec.Events()))
		assert.Equal(t, breaker.Manual, b.Stats().Reason)
	})
	t.Run("Reset of a closed breaker clears its counts without an event", func(t *testing.T) {
		rec := &fuseboxtest.Recorder{}
		b := newBreaker(t, breaker.Config{OnTransition: rec.Listen})
		for range 4 {
			fail(b)
		}
		b.Reset()
		assert.Zero(t, b.Stats().ConsecutiveFailures)
		fail(b)
		assert.Equal(t, breaker.Closed, b.State())
		assert.Empty(t, rec.Events())
	})
	t.Run("ForcedOpen rejects forever until Reset", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := newBreaker(t, breaker.Config{ResetTimeout: time.Second})
			b.ForceOpen()
			time.Sleep(time.Hour)
			_, err := b.Allow()
			assert.ErrorIs(t, err, breaker.ErrOpen)
			b.Trip(breaker.Saturation)
			assert.Equal(t, breaker.ForcedOpen, b.State(), "automatic trips do not touch an override")
			b.Reset()
			assert.NoError(t, succeed(b))
		})
	})
	t.Run("Disabled admits always and still records", func(t *testing.T) {
		b := newBreaker(t, breaker.Config{ConsecutiveFailures: 1})
		b.Disable()
		for range 10 {
			require.NoError(t, fail(b))
		}
		b.Trip(breaker.Saturation)
		s := b.Stats()
		assert.Equal(t, breaker.Disabled, s.State)
		assert.Equal(t, uint64(10), s.Failures)
		b.Reset()
		fail(b)
		assert.Equal(t, breaker.Open, b.State())
	})
	t.Run("Reject trips a closed breaker in that call", func(t *testing.T) {
		b := newBreaker(t, breaker.Config{})
		p, err := b.Allow()
		require.NoError(t, err)
		p.Reject(breaker.Saturation)
		assert.Equal(t, breaker.Open, b.State())
		assert.Equal(t, breaker.Saturation, b.Stats().Reason)
	})
	t.Run("Drained closes only a queue-full breaker", func(t *testing.T) {
		b := newBreaker(t, breaker.Config{})
		assert.False(t, b.Drained(), "closed")
		b.Trip(breaker.Saturation)
		assert.False(t, b.Drained(), "open for another reason")
		b.Reset()
		b.Trip(breaker.QueueFull)
		assert.True(t, b.Drained())
		s := b.Stats()
		assert.Equal(t, breaker.Closed, s.State)
		assert.Equal(t, breaker.QueueDrained, s.Reason)
	})
	t.Run("the zero Permit ignores everything", func(t *testing.T) {
		var p breaker.Permit
		p.Done(errBoom)
		p.Ignore()
		p.Reject(breaker.Saturation)
		assert.False(t, p.Probe())
	})
}
