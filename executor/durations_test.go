package executor_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

func TestStatsDurations(t *testing.T) {
	t.Run("calls are counted by outcome in cumulative buckets, timeouts at the timeout", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, executor.Config{InvocationTimeout: 200 * time.Millisecond,
				Breaker: breaker.Config{ConsecutiveFailures: -1, ResetTimeout: time.Second}})
			sleep := func(d time.Duration, err error) func(context.Context) (int, error) {
				return func(ctx context.Context) (int, error) {
					select {
					case <-time.After(d):
						return 1, err
					case <-ctx.Done():
						return 0, ctx.Err()
					}
				}
			}
			for _, d := range []time.Duration{3 * time.Millisecond, 5 * time.Millisecond, 70 * time.Millisecond} {
				_, err := executor.Do(t.Context(), ex, sleep(d, nil))
				require.NoError(t, err)
			}
			_, err := executor.Do(t.Context(), ex, sleep(30*time.Millisecond, errBoom))
			require.ErrorIs(t, err, errBoom)
			_, err = executor.Do(t.Context(), ex, sleep(time.Hour, nil))
			require.ErrorIs(t, err, executor.ErrTimeout)
			ctx, cancel := context.WithCancel(t.Context())
			time.AfterFunc(60*time.Millisecond, cancel)
			_, err = executor.Do(ctx, ex, sleep(time.Hour, nil))
			require.ErrorIs(t, err, context.Canceled)
			time.Sleep(time.Second) // every call has ended

			st := ex.Stats()
			d := st.Durations
			assert.Equal(t, st.Successes, d[breaker.Success].Count, "every success was timed")
			ms := time.Millisecond
			assert.Equal(t, executor.Histogram{
				//         5ms 10 25 50 100 250 500 1s 2.5 5 10
				Buckets: [...]uint64{2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3},
				Count:   3, Sum: 78 * ms,
			}, d[breaker.Success])
			assert.Equal(t, executor.Histogram{
				Buckets: [...]uint64{0, 0, 0, 1, 1, 2, 2, 2, 2, 2, 2},
				Count:   2, Sum: 230 * ms,
			}, d[breaker.Failure], "30 ms, and the timeout at 200 ms")
			assert.Equal(t, executor.Histogram{
				Buckets: [...]uint64{0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1},
				Count:   1, Sum: 60 * ms,
			}, d[breaker.Ignored], "the call its caller cancelled")
		})
	})
	t.Run("calls that never ran are not in it; an idle executor has empty histograms", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ex := newExecutor(t, executor.Config{Slots: 1, Breaker: breaker.Config{ConsecutiveFailures: 1}})
			assert.Equal(t, [3]executor.Histogram{}, ex.Stats().Durations)
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			_, err := executor.Do(ctx, ex, func(context.Context) (int, error) { return 1, nil })
			require.ErrorIs(t, err, context.Canceled)
			_, err = executor.Do(t.Context(), ex, func(context.Context) (int, error) { return 0, errBoom })
			require.ErrorIs(t, err, errBoom)
			_, err = executor.Do(t.Context(), ex, func(context.Context) (int, error) { return 1, nil })
			require.ErrorIs(t, err, breaker.ErrOpen)
			d := ex.Stats().Durations
			assert.Zero(t, d[breaker.Success].Count)
			assert.Zero(t, d[breaker.Ignored].Count, "the cancelled call never ran")
			assert.Equal(t, uint64(1), d[breaker.Failure].Count)
		})
	})
}
