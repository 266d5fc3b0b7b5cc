package policy_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/policy"
)

var errBadGateway = errors.New("502 bad gateway")

func TestRetryRules(t *testing.T) {
	for _, tc := range []struct {
		name       string
		err        error
		idempotent bool
		attempts   int
	}{
		{"a supplier's failure is retried", errBadGateway, false, 3},
		{"an open breaker is never retried", breaker.ErrOpen, true, 1},
		{"a saturated bulkhead is not retried for a call that is not idempotent", executor.ErrSaturated, false, 1},
		{"a saturated bulkhead is retried for an idempotent call", executor.ErrSaturated, true, 3},
		{"a timeout is not retried for a call that is not idempotent", executor.ErrTimeout, false, 1},
		{"a timeout is retried for an idempotent call", executor.ErrTimeout, true, 3},
		{"a closed executor is never retried", executor.ErrClosed, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ex := newExecutor(t, "quotes", 4)
				r, err := policy.NewRetrier(policy.RetryConfig{Seed: 1})
				require.NoError(t, err)
				var calls atomic.Int32
				fn := func(context.Context) (int, error) { calls.Add(1); return 0, tc.err }
				call := policy.Retry[int]
				if tc.idempotent {
					call = policy.RetryIdempotent[int]
				}
				_, err = call(context.Background(), r, ex, fn)
				require.ErrorIs(t, err, tc.err)
				assert.Equal(t, int32(tc.attempts), calls.Load(), "attempts")
				s := r.Stats()[0]
				assert.Equal(t, uint64(tc.attempts), s.Attempts)
				assert.Equal(t, uint64(tc.attempts-1), s.Retries)
			})
		})
	}
}

func TestRetryRefusals(t *testing.T) {
	t.Run("an attempt the open breaker refused is not retried, nor counted as a call of fn", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, "quotes", 4)
			ex.Breaker().Trip(breaker.Manual)
			r, _ := policy.NewRetrier(policy.RetryConfig{})
			calls := 0
			_, err := policy.RetryIdempotent(context.Background(), r, ex, func(context.Context) (int, error) { calls++; return 0, nil })
			require.ErrorIs(t, err, breaker.ErrOpen)
			assert.Zero(t, calls)
			assert.Equal(t, uint64(1), r.Stats()[0].Attempts)
		})
	})
	t.Run("a panic is not retried", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, "quotes", 4)
			r, _ := policy.NewRetrier(policy.RetryConfig{})
			calls := 0
			_, err := policy.Retry(context.Background(), r, ex, func(context.Context) (int, error) { calls++; panic("bug") })
			var pe *breaker.PanicError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, 1, calls)
		})
	})
	t.Run("Retryable narrows the errors retried, and its panic ends the call", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, "quotes", 4)
			r, _ := policy.NewRetrier(policy.RetryConfig{Retryable: func(err error) bool { return !errors.Is(err, errBadGateway) }})
			calls := 0
			_, err := policy.Retry(context.Background(), r, ex, func(context.Context) (int, error) { calls++; return 0, errBadGateway })
			require.ErrorIs(t, err, errBadGateway)
			assert.Equal(t, 1, calls)

			r, _ = policy.NewRetrier(policy.RetryConfig{Retryable: func(error) bool { panic("classifier bug") }})
			_, err = policy.Retry(context.Background(), r, ex, func(context.Context) (int, error) { return 0, errBadGateway })
			var pe *breaker.PanicError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, "RetryConfig.Retryable", pe.Callback)
		})
	})
	t.Run("a panic in the error's RetryAfter ends the call with a PanicError", func(t *testing.T) {
		for name, e := range map[string]error{
			"a panicking method":                     panickingAfterError{},
			"a typed nil whose method reads a field": (*afterPtrError)(nil),
		} {
			t.Run(name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					ex := newExecutor(t, "quotes", 4)
					r, _ := policy.NewRetrier(policy.RetryConfig{Seed: 1})
					calls := 0
					var err error
					require.NotPanics(t, func() {
						_, err = policy.Retry(context.Background(), r, ex, func(context.Context) (int, error) { calls++; return 0, e })
					})
					var pe *breaker.PanicError
					require.ErrorAs(t, err, &pe)
					assert.Equal(t, "RetryAfterError.RetryAfter", pe.Callback)
					assert.Equal(t, 1, calls, "not retried")
				})
			})
		}
	})
}

// panickingAfterError is an error whose RetryAfter panics.
type panickingAfterError struct{}

func (panickingAfterError) Error() string             { return "429 too many requests" }
func (panickingAfterError) RetryAfter() time.Duration { panic("RetryAfter bug") }

// afterPtrError is an error whose methods read its fields through a
// pointer receiver, as most do: a typed nil panics in them.
type afterPtrError struct {
	code  int
	after time.Duration
}

func (e *afterPtrError) Error() string             { return fmt.Sprintf("HTTP %d", e.code) }
func (e *afterPtrError) RetryAfter() time.Duration { return e.after }

func TestRetryBackoff(t *testing.T) {
	// attemptTimes runs a call that always fails and returns when each of
	// its attempts started, from the call's start.
	attemptTimes := func(t *testing.T, cfg policy.RetryConfig, err error) []time.Duration {
		ex := newExecutor(t, "quotes", 4)
		r, rerr := policy.NewRetrier(cfg)
		require.NoError(t, rerr)
		start := time.Now()
		var at []time.Duration
		_, got := policy.Retry(context.Background(), r, ex, func(context.Context) (int, error) {
			at = append(at, time.Since(start))
			return 0, err
		})
		require.ErrorIs(t, got, err)
		return at
	}
	t.Run("waits double, jittered within their upper half, and a seed repeats them", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			cfg := policy.RetryConfig{MaxAttempts: 5, Backoff: 100 * time.Millisecond, Seed: 7}
			at := attemptTimes(t, cfg, errBadGateway)
			require.Len(t, at, 5)
			for i := 1; i < len(at); i++ {
				full := 100 * time.Millisecond << (i - 1)
				wait := at[i] - at[i-1]
				assert.GreaterOrEqual(t, wait, full/2, "wait %d", i)
				assert.LessOrEqual(t, wait, full, "wait %d", i)
			}
			assert.Equal(t, at, attemptTimes(t, cfg, errBadGateway), "the same seed, the same waits")
		})
	})
	t.Run("MaxBackoff caps the waits", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			at := attemptTimes(t, policy.RetryConfig{MaxAttempts: 6, Backoff: time.Second, MaxBackoff: 2 * time.Second, Seed: 1}, errBadGateway)
			for i := 1; i < len(at); i++ {
				assert.LessOrEqual(t, at[i]-at[i-1], 2*time.Second)
			}
		})
	})
	t.Run("a cap up to time.Duration's largest value saturates the doubling instead of overflowing", func(t *testing.T) {
		for _, cfg := range []policy.RetryConfig{
			{MaxAttempts: 40, Backoff: time.Second, MaxBackoff: math.MaxInt64, Budget: policy.Budget{Unlimited: true}, Seed: 1},
			{MaxAttempts: 3, Backoff: 5e18, MaxBackoff: math.MaxInt64, Seed: 1}, // doubled once, past the largest value
		} {
			synctest.Test(t, func(t *testing.T) {
				var at []time.Duration
				require.NotPanics(t, func() { at = attemptTimes(t, cfg, errBadGateway) })
				assert.Len(t, at, cfg.MaxAttempts)
			})
		}
	})
	t.Run("a Retry-After longer than the back-off is honoured", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			at := attemptTimes(t, policy.RetryConfig{Backoff: 10 * time.Millisecond, Seed: 1}, afterError{3 * time.Second})
			require.Len(t, at, 3)
			assert.Equal(t, 3*time.Second, at[1]-at[0])
			assert.Equal(t, 3*time.Second, at[2]-at[1])
		})
	})
}

func TestRetryIsBoundedByTheContext(t *testing.T) {
	t.Run("a wait that would outlast the deadline is not begun", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, "quotes", 4)
			r, _ := policy.NewRetrier(policy.RetryConfig{Backoff: 2 * time.Second, Seed: 1})
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, err := policy.Retry(ctx, r, ex, func(context.Context) (int, error) { return 0, errBadGateway })
			require.ErrorIs(t, err, errBadGateway, "the last attempt's error")
			assert.Zero(t, time.Since(start), "returned without waiting")
			assert.Equal(t, uint64(1), r.Stats()[0].CtxRefused)
		})
	})
	t.Run("a Retry-After beyond the deadline is not waited for", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, "quotes", 4)
			r, _ := policy.NewRetrier(policy.RetryConfig{Backoff: time.Millisecond})
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			start := time.Now()
			_, err := policy.Retry(ctx, r, ex, func(context.Context) (int, error) { return 0, afterError{time.Minute} })
			require.ErrorAs(t, err, new(afterError))
			assert.Zero(t, time.Since(start))
		})
	})
	t.Run("a cancellation during the wait ends the call at once", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, "quotes", 4)
			r, _ := policy.NewRetrier(policy.RetryConfig{Backoff: 10 * time.Second, MaxBackoff: 10 * time.Second})
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(time.Second, cancel)
			start := time.Now()
			_, err := policy.Retry(ctx, r, ex, func(context.Context) (int, error) { return 0, errBadGateway })
			require.ErrorIs(t, err, context.Canceled)
			assert.Equal(t, time.Second, time.Since(start))
		})
	})
}

func TestRetryBudget(t *testing.T) {
	t.Run("a retry the budget refuses returns the last error, counted", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, "quotes", 4)
			// No floor: one call earns a tenth of a retry.
			r, _ := policy.NewRetrier(policy.RetryConfig{Budget: policy.Budget{Ratio: 0.1, Floor: -1}})
			calls := 0
			_, err := policy.Retry(context.Background(), r, ex, func(context.Context) (int, error) { calls++; return 0, errBadGateway })
			require.ErrorIs(t, err, errBadGateway)
			assert.Equal(t, 1, calls)
			s := r.Stats()[0]
			assert.Equal(t, uint64(1), s.BudgetRefused)
			assert.Zero(t, s.Retries)
		})
	})
	t.Run("the floor lets a quiet supplier retry, and comes back with time", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, "quotes", 4)
			r, _ := policy.NewRetrier(policy.RetryConfig{MaxAttempts: 2, Backoff: time.Millisecond, Budget: policy.Budget{Ratio: 0.01, Floor: 3, Window: time.Second}})
			fail := func(context.Context) (int, error) { return 0, errBadGateway }
			for range 5 {
				_, _ = policy.Retry(context.Background(), r, ex, fail)
			}
			s := r.Stats()[0]
			assert.Equal(t, uint64(3), s.Retries, "the floor")
			assert.Equal(t, uint64(2), s.BudgetRefused)
			time.Sleep(5 * time.Second) // the spent retries decay
			_, _ = policy.Retry(context.Background(), r, ex, fail)
			assert.Equal(t, uint64(4), r.Stats()[0].Retries)
		})
	})
	t.Run("the budget holds under concurrency", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, "quotes", 64, func(c *executor.Config) { c.Breaker.ConsecutiveFailures = 1 << 30 })
			const floor, ratio = 5, 0.1
			r, _ := policy.NewRetrier(policy.RetryConfig{MaxAttempts: 3, Backoff: time.Millisecond, Budget: policy.Budget{Ratio: ratio, Floor: floor, Window: time.Hour}})
			var wg sync.WaitGroup
			for range 64 {
				wg.Go(func() {
					for range 50 {
						_, _ = policy.Retry(context.Background(), r, ex, func(context.Context) (int, error) { return 0, errBadGateway })
					}
				})
			}
			wg.Wait()
			s := r.Stats()[0]
			require.Equal(t, uint64(64*50), s.Calls)
			assert.LessOrEqual(t, float64(s.Retries), ratio*float64(s.Calls)+floor, "retries %d of %d calls", s.Retries, s.Calls)
			assert.GreaterOrEqual(t, float64(s.Retries), 0.9*ratio*float64(s.Calls), "the budget was used")
			assert.Equal(t, s.Attempts, s.Calls+s.Retries)
			assert.Positive(t, s.BudgetRefused)
		})
	})
}

func TestRetryConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   policy.RetryConfig
		field string
	}{
		{"negative attempts", policy.RetryConfig{MaxAttempts: -1}, "MaxAttempts"},
		{"negative back-off", policy.RetryConfig{Backoff: -1}, "Backoff"},
		{"a cap below the back-off", policy.RetryConfig{Backoff: time.Second, MaxBackoff: time.Millisecond}, "MaxBackoff"},
		{"a ratio above 1", policy.RetryConfig{Budget: policy.Budget{Ratio: 1.5}}, "Budget.Ratio"},
		{"a negative window", policy.RetryConfig{Budget: policy.Budget{Window: -time.Second}}, "Budget.Window"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := policy.NewRetrier(tc.cfg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.field)
		})
	}
	t.Run("nil arguments are errors, not panics", func(t *testing.T) {
		r, _ := policy.NewRetrier(policy.RetryConfig{})
		_, err := policy.Retry[int](context.Background(), r, nil, func(context.Context) (int, error) { return 0, nil })
		assert.ErrorContains(t, err, "nil *executor.Executor")
		_, err = policy.Retry[int](context.Background(), nil, nil, nil)
		assert.ErrorContains(t, err, "nil policy")
	})
	t.Run("a zero Retrier, Hedger or Executor is an error, not a panic", func(t *testing.T) {
		ex := newExecutor(t, "s", 2)
		r0, _ := policy.NewRetrier(policy.RetryConfig{})
		h0, _ := policy.NewHedger(policy.HedgeConfig{})
		ran := false
		fn := func(context.Context) (int, error) { ran = true; return 1, nil }
		_, err := policy.Retry(context.Background(), &policy.Retrier{}, ex, fn)
		assert.ErrorContains(t, err, "zero Retrier (make it with NewRetrier)")
		_, err = policy.Hedge(context.Background(), &policy.Hedger{}, ex, fn)
		assert.ErrorContains(t, err, "zero Hedger (make it with NewHedger)")
		_, err = policy.Retry(context.Background(), r0, &executor.Executor{}, fn)
		assert.ErrorContains(t, err, "zero executor.Executor")
		_, err = policy.Hedge(context.Background(), h0, &executor.Executor{}, fn)
		assert.ErrorContains(t, err, "zero executor.Executor")
		assert.False(t, ran, "nothing is called")
		var nilR *policy.Retrier
		var nilH *policy.Hedger
		assert.Empty(t, nilR.Stats())
		assert.Empty(t, nilH.Stats())
	})
}

func TestRetryIsNeverMadeIntoAnOpenBreaker(t *testing.T) {
	t.Run("an attempt that opens the breaker ends the call with the supplier's error, at once", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, "quotes", 4, func(c *executor.Config) { c.Breaker.ConsecutiveFailures = 1 })
			r, _ := policy.NewRetrier(policy.RetryConfig{Seed: 1, Budget: policy.Budget{Ratio: 0.1, Floor: 1}})
			calls := 0
			start := time.Now()
			_, err := policy.Retry(context.Background(), r, ex, func(context.Context) (int, error) { calls++; return 0, errBadGateway })
			require.ErrorIs(t, err, errBadGateway, "the supplier's error, not the refusal")
			assert.NotErrorIs(t, err, breaker.ErrOpen)
			assert.Zero(t, time.Since(start), "no back-off waited")
			assert.Equal(t, 1, calls)
			s := r.Stats()[0]
			assert.Equal(t, uint64(1), s.Attempts)
			assert.Zero(t, s.Retries)
			assert.Equal(t, uint64(1), s.OpenRefused)
			// The budget (a floor of 1) was not spent: a retry into a
			// closed breaker is still possible.
			ex.Breaker().Reset()
			calls = 0
			_, err = policy.Retry(context.Background(), r, ex, func(context.Context) (int, error) {
				calls++
				if calls == 1 {
					return 0, errBadGateway
				}
				return 7, nil
			})
			require.ErrorIs(t, err, errBadGateway, "ConsecutiveFailures 1 opens it again")
			assert.Zero(t, r.Stats()[0].BudgetRefused)
		})
	})
	t.Run("a breaker another caller opened during the back-off is not retried into", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, "quotes", 4)
			r, _ := policy.NewRetrier(policy.RetryConfig{Seed: 1, Backoff: time.Second, MaxBackoff: time.Second})
			calls := 0
			_, err := policy.Retry(context.Background(), r, ex, func(context.Context) (int, error) {
				calls++
				time.AfterFunc(100*time.Millisecond, func() { _ = ex.Breaker().Trip(breaker.Manual) }) // within the wait of 0.5-1 s
				return 0, errBadGateway
			})
			require.ErrorIs(t, err, errBadGateway)
			assert.NotErrorIs(t, err, breaker.ErrOpen)
			assert.Equal(t, 1, calls)
			s := r.Stats()[0]
			assert.Equal(t, uint64(1), s.OpenRefused)
			assert.Zero(t, s.Retries)
		})
	})
	t.Run("a retry a half-open breaker refuses returns the supplier's error and its budget", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, "quotes", 4, func(c *executor.Config) {
				c.InvocationTimeout = 100 * time.Second
				c.Breaker = breaker.Config{ConsecutiveFailures: 1, ResetTimeout: 200 * time.Second}
			})
			// No floor, ratio 1: the first call earns exactly one retry.
			r, _ := policy.NewRetrier(policy.RetryConfig{MaxAttempts: 2, Seed: 1, Budget: policy.Budget{Ratio: 1, Floor: -1, Window: time.Hour}})
			release := make(chan struct{})
			probing := make(chan struct{})
			time.AfterFunc(201*time.Second, func() { // the probe, holding the one probe place
				go func() {
					_, _ = executor.Do(context.Background(), ex, func(context.Context) (int, error) {
						close(probing)
						<-release
						return 0, nil
					})
				}()
			})
			start := time.Now()
			// The retry comes at 250 s, while the probe (201-301 s) runs.
			_, err := policy.Retry(context.Background(), r, ex, func(context.Context) (int, error) { return 0, afterError{250 * time.Second} })
			<-probing
			require.ErrorAs(t, err, new(afterError))
			assert.NotErrorIs(t, err, breaker.ErrOpen)
			assert.Equal(t, 250*time.Second, time.Since(start), "waited: half-open may admit a probe")
			s := r.Stats()[0]
			assert.Equal(t, uint64(1), s.OpenRefused)
			assert.Equal(t, uint64(2), s.Attempts)
			close(release)
			synctest.Wait()
			// The refused retry's budget came back: a retry is possible again.
			calls := 0
			_, err = policy.Retry(context.Background(), r, ex, func(context.Context) (int, error) {
				calls++
				if calls == 1 {
					return 0, errBadGateway
				}
				return 1, nil
			})
			require.ErrorIs(t, err, errBadGateway, "ConsecutiveFailures 1: the failure opens it again")
			assert.Zero(t, r.Stats()[0].BudgetRefused)
		})
	})
	t.Run("a breaker whose open period ends within the back-off lets the retry probe", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, "quotes", 4, func(c *executor.Config) { c.Breaker.ConsecutiveFailures = 1 })
			r, _ := policy.NewRetrier(policy.RetryConfig{Seed: 1, Backoff: 8 * time.Second, MaxBackoff: 8 * time.Second})
			calls := 0
			v, err := policy.Retry(context.Background(), r, ex, func(context.Context) (int, error) {
				calls++
				if calls == 1 {
					return 0, errBadGateway
				}
				return 7, nil
			})
			require.NoError(t, err)
			assert.Equal(t, 7, v)
			assert.Equal(t, breaker.Closed, ex.Breaker().State(), "the retry was the probe that closed it")
		})
	})
	t.Run("in shadow mode an open breaker refuses nothing, and the retry is made", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, "quotes", 4, func(c *executor.Config) { c.Breaker.ConsecutiveFailures = 1; c.Shadow = true })
			r, _ := policy.NewRetrier(policy.RetryConfig{Seed: 1})
			calls := 0
			_, err := policy.Retry(context.Background(), r, ex, func(context.Context) (int, error) { calls++; return 0, errBadGateway })
			require.ErrorIs(t, err, errBadGateway)
			assert.Equal(t, 3, calls)
		})
	})
}
