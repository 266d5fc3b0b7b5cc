package fuseboxtest_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fuseboxtest"
)

func TestRecorderWaitsInSynctest(t *testing.T) {
	t.Run("a wait blocks durably until the event comes", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var rec fuseboxtest.Recorder
			b, err := breaker.New(breaker.Config{Name: "payments", OnTransition: rec.Listen})
			require.NoError(t, err)
			var got atomic.Pointer[breaker.Event]
			var wg sync.WaitGroup
			wg.Go(func() {
				e, err := rec.WaitForState(context.Background(), breaker.Open)
				assert.NoError(t, err)
				got.Store(&e)
			})
			// synctest.Wait returns only once the waiter is durably
			// blocked: a wait on a sync.Cond or a polling loop would hang
			// here or never let it return.
			synctest.Wait()
			assert.Nil(t, got.Load(), "nothing happened yet")
			b.Trip(breaker.Saturation)
			wg.Wait()
			require.NotNil(t, got.Load())
			assert.Equal(t, breaker.Saturation, got.Load().Reason)
		})
	})

	t.Run("waits follow the events in order, past ones included", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var rec fuseboxtest.Recorder
			ex, err := executor.New("payments", executor.Config{InvocationTimeout: time.Second,
				Breaker: breaker.Config{ConsecutiveFailures: 1, ResetTimeout: 10 * time.Second, OnTransition: rec.Listen}})
			require.NoError(t, err)
			defer ex.Close(context.Background())
			payments := newFake(t, fuseboxtest.Phase{Do: fuseboxtest.Fail(errDown), Calls: 1}, fuseboxtest.Phase{})
			call := fuseboxtest.Fn(payments, "paid")
			_, err = executor.Do(context.Background(), ex, call)
			require.ErrorIs(t, err, errDown)

			ctx := t.Context()
			open, err := rec.WaitForState(ctx, breaker.Open) // it happened already
			require.NoError(t, err)
			assert.Equal(t, breaker.ConsecutiveFailures, open.Reason)

			time.Sleep(10 * time.Second)
			v, err := executor.Do(ctx, ex, call) // the probe
			require.NoError(t, err)
			assert.Equal(t, "paid", v)
			evs, err := rec.WaitForEvents(ctx, 2)
			require.NoError(t, err)
			assert.Equal(t, breaker.HalfOpen, evs[0].To)
			assert.Equal(t, breaker.Closed, evs[1].To)
			assert.Len(t, rec.Events(), 3)
		})
	})

	t.Run("a wait gives up with its context and says what it saw", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var rec fuseboxtest.Recorder
			b, err := breaker.New(breaker.Config{Name: "payments", OnTransition: rec.Listen})
			require.NoError(t, err)
			b.ForceOpen()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			start := time.Now()
			_, err = rec.WaitForState(ctx, breaker.HalfOpen)
			assert.ErrorIs(t, err, context.DeadlineExceeded)
			assert.ErrorContains(t, err, "state half-open")
			assert.ErrorContains(t, err, "payments: closed → forced-open (manual)")
			assert.Equal(t, time.Minute, time.Since(start), "the bubble's clock ran to the deadline")
			_, err = rec.WaitForEvents(ctx, 2)
			assert.ErrorContains(t, err, "2 events")
		})
	})

	t.Run("events of a group's suppliers arrive concurrently", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var rec fuseboxtest.Recorder
			g, err := executor.NewGroup(executor.GroupConfig{})
			require.NoError(t, err)
			defer g.Close(context.Background())
			defer g.Subscribe(rec.Listen)()
			names := []string{"a", "b", "c", "d"}
			var wg sync.WaitGroup
			for _, n := range names {
				ex, err := g.Executor(n)
				require.NoError(t, err)
				wg.Go(func() { ex.Breaker().Trip(breaker.Manual) })
			}
			evs, err := rec.WaitForEvents(t.Context(), len(names))
			require.NoError(t, err)
			wg.Wait()
			seen := map[string]bool{}
			for _, e := range evs {
				seen[e.Name] = true
			}
			assert.Len(t, seen, len(names))
			ctx, cancel := context.WithTimeout(t.Context(), time.Second)
			defer cancel()
			_, err = rec.WaitFor(ctx, func(breaker.Event) bool { return true })
			assert.ErrorIs(t, err, context.DeadlineExceeded, "the cursor is past every event")
		})
	})
}

// A wait with bad arguments is an error, and moves no cursor; with an
// event recorded, a negative count panicked with a slice out of range and
// a nil match with a nil pointer.
func TestRecorderRefusesBadWaits(t *testing.T) {
	var rec fuseboxtest.Recorder
	rec.Listen(breaker.Event{Name: "payments", To: breaker.Open})
	ctx := context.Background()

	_, err := rec.WaitForEvents(ctx, -1)
	require.EqualError(t, err, "fuseboxtest: WaitForEvents wants n ≥ 0 events, got -1")
	_, err = rec.WaitFor(ctx, nil)
	require.EqualError(t, err, "fuseboxtest: WaitFor with a nil match function")
	const nilCtx = "fuseboxtest: a wait with a nil context (use context.Background())"
	//lint:ignore SA1012 a nil context is what this test is about
	_, err = rec.WaitFor(nil, func(breaker.Event) bool { return false }) //nolint:staticcheck
	require.EqualError(t, err, nilCtx)
	//lint:ignore SA1012 a nil context is what this test is about
	_, err = rec.WaitForEvents(nil, 2) //nolint:staticcheck
	require.EqualError(t, err, nilCtx)
	//lint:ignore SA1012 a nil context is what this test is about
	_, err = rec.WaitForState(nil, breaker.Closed) //nolint:staticcheck
	require.ErrorContains(t, err, nilCtx)

	evs, err := rec.WaitForEvents(ctx, 1)
	require.NoError(t, err)
	assert.Equal(t, "payments", evs[0].Name, "the cursor did not move")
}
