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

// A breaker.Config.ReadyToTrip that panics is user code like a classifier:
// on the call's goroutine and on the one that records a timeout, the
// future resolves with a *PanicError naming it, nothing hangs, and the
// breaker stays closed.
func TestAPanickingReadyToTripResolvesTheFuture(t *testing.T) {
	tests := []struct {
		name string
		fn   func(ctx context.Context) (int, error)
	}{
		{"a successful call", func(context.Context) (int, error) { return 1, nil }},
		{"a failed call", func(context.Context) (int, error) { return 0, errBoom }},
		{"a call that ignores its deadline", func(context.Context) (int, error) {
			time.Sleep(2 * time.Second)
			return 1, nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ex := newExecutor(t, executor.Config{InvocationTimeout: time.Second, Breaker: breaker.Config{
					ResetTimeout: time.Minute,
					ReadyToTrip:  func(breaker.Counts) bool { panic("a rule with a bug") },
				}})
				_, err := executor.Do(context.Background(), ex, tt.fn)
				requireCallbackPanic(t, err, "Breaker.ReadyToTrip")
				synctest.Wait()
				s := ex.Stats()
				assert.Equal(t, uint64(1), s.Panics)
				assert.Equal(t, breaker.Closed, s.Breaker.State)
			})
		})
	}
}

// The rule trips an executor's breaker like the built-in ones.
func TestReadyToTripTripsTheExecutor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ex := newExecutor(t, executor.Config{InvocationTimeout: time.Second, Breaker: breaker.Config{
			ResetTimeout:        time.Minute,
			ConsecutiveFailures: -1,
			ReadyToTrip:         func(c breaker.Counts) bool { return c.Calls >= 4 && c.FailureRate >= 0.5 },
		}})
		for i := range 4 {
			_, _ = executor.Do(context.Background(), ex, func(context.Context) (int, error) {
				if i%2 == 0 {
					return 0, errBoom
				}
				return 1, nil
			})
		}
		_, err := executor.Do(context.Background(), ex, func(context.Context) (int, error) { return 1, nil })
		require.ErrorIs(t, err, breaker.ErrOpen)
		assert.Equal(t, breaker.ReadyToTrip, ex.Stats().Breaker.Reason)
	})
}
