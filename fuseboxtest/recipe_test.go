package fuseboxtest_test

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
	"github.com/fusebox-go/fusebox/fuseboxtest"
)

// checkout is the code under test: it charges through the payments
// executor and, when payments is refused or times out, answers with the
// last good answer it has cached.
type checkout struct {
	payments *executor.Executor
	charge   func(context.Context) (string, error)

	mu    sync.Mutex
	cache string
}

func (c *checkout) pay(ctx context.Context) (string, error) {
	return executor.DoOr(ctx, c.payments,
		func(ctx context.Context) (string, error) {
			answer, err := c.charge(ctx)
			if err == nil {
				c.mu.Lock()
				c.cache = answer
				c.mu.Unlock()
			}
			return answer, err
		},
		func(context.Context, error) (string, error) {
			c.mu.Lock()
			defer c.mu.Unlock()
			return "cached: " + c.cache, nil
		})
}

// The recipe of docs/testing.md: when payments hang, checkout answers from
// the cache within 50 ms, the breaker opens, and once payments recover a
// probe closes it again. Under synctest the minute this covers takes
// milliseconds, and the latencies are exact.
func TestCheckoutAnswersFromTheCacheWhenPaymentsHang(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		payments, err := fuseboxtest.NewFake(fuseboxtest.Phase{Do: fuseboxtest.Healthy(5 * time.Millisecond)})
		require.NoError(t, err)
		var rec fuseboxtest.Recorder
		ex, err := executor.New("payments", executor.Config{
			InvocationTimeout: 40 * time.Millisecond,
			Breaker:           breaker.Config{ResetTimeout: time.Second, OnTransition: rec.Listen},
		})
		require.NoError(t, err)
		defer ex.Close(context.Background())
		shop := &checkout{payments: ex, charge: fuseboxtest.Fn(payments, "paid")}

		answer, err := shop.pay(t.Context())
		require.NoError(t, err)
		require.Equal(t, "paid", answer)

		// Traffic: a checkout every 10 ms until the test is done; each
		// answer and how long it took.
		type reply struct {
			answer string
			took   time.Duration
		}
		var (
			mu      sync.Mutex
			replies []reply
			wg      sync.WaitGroup
		)
		ctx, stop := context.WithCancel(t.Context())
		wg.Go(func() {
			for ctx.Err() == nil {
				start := time.Now()
				answer, err := shop.pay(context.Background())
				assert.NoError(t, err)
				mu.Lock()
				replies = append(replies, reply{answer, time.Since(start)})
				mu.Unlock()
				time.Sleep(10 * time.Millisecond)
			}
		})

		require.NoError(t, payments.Set(fuseboxtest.Hang()))
		open, err := rec.WaitForState(ctx, breaker.Open)
		require.NoError(t, err)
		assert.Equal(t, breaker.ConsecutiveFailures, open.Reason, "five timeouts in a row")
		time.Sleep(200 * time.Millisecond) // served while open
		mu.Lock()
		during := append([]reply(nil), replies...)
		mu.Unlock()

		require.NoError(t, payments.Set(fuseboxtest.Healthy(5*time.Millisecond)))
		_, err = rec.WaitForState(ctx, breaker.Closed) // a probe after the reset timeout
		require.NoError(t, err)
		stop()
		wg.Wait()

		require.NotEmpty(t, during)
		for i, r := range during {
			assert.Equal(t, "cached: paid", r.answer, "reply %d", i)
			assert.LessOrEqual(t, r.took, 50*time.Millisecond, "reply %d", i)
		}
		assert.Equal(t, "paid", replies[len(replies)-1].answer, "fresh again after the recovery")
	})
}
