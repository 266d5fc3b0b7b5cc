package executor_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fuseboxtest"
)

// DoOr answers from a cache while the supplier is refused.
func ExampleDoOr() {
	ex, _ := executor.New("prices", executor.Config{})
	defer ex.Close(context.Background())
	cached := 42.0
	price := func(ctx context.Context) float64 {
		p, err := executor.DoOr(ctx, ex,
			func(ctx context.Context) (float64, error) { return 43, nil },
			func(_ context.Context, err error) (float64, error) {
				fmt.Println("fallback:", err)
				return cached, nil
			})
		if err != nil {
			return -1
		}
		return p
	}
	fmt.Println(price(context.Background()))
	ex.Breaker().Trip(breaker.Manual) // the supplier is in trouble
	fmt.Println(price(context.Background()))
	// Output:
	// 43
	// fallback: fusebox: prices: rejected: open
	// 42
}

// retryBudget lets retries be at most a tenth of the calls: a supplier in
// trouble sees at most 10% more traffic because of them.
type retryBudget struct{ calls, retries atomic.Int64 }

func (b *retryBudget) call() { b.calls.Add(1) }

func (b *retryBudget) allowRetry() bool {
	if b.retries.Load()*10 >= b.calls.Load() {
		return false
	}
	b.retries.Add(1)
	return true
}

// withRetry retries around Do, never inside the protected function: at most
// twice, never after ErrOpen (the breaker just said the supplier is down)
// nor after an error of the supplier itself, within a budget, with
// jittered back-off, and never past the caller's context.
func withRetry[T any](ctx context.Context, ex *executor.Executor, budget *retryBudget, fn func(context.Context) (T, error)) (T, error) {
	budget.call()
	backoff := 10 * time.Millisecond
	for attempt := 0; ; attempt++ {
		v, err := executor.Do(ctx, ex, fn)
		retryable := errors.Is(err, executor.ErrBusy) || errors.Is(err, executor.ErrTimeout)
		if err == nil || !retryable || attempt == 2 || !budget.allowRetry() {
			return v, err
		}
		select {
		case <-time.After(backoff/2 + rand.N(backoff/2)):
			backoff *= 2
		case <-ctx.Done():
			return v, err
		}
	}
}

// A retry recipe that keeps retries from multiplying the load on a failing
// supplier.
func Example_retry() {
	ex, _ := executor.New("inventory", executor.Config{})
	defer ex.Close(context.Background())
	budget := &retryBudget{}
	ctx := context.Background()
	inventory, _ := fuseboxtest.NewFake() // healthy; it counts the calls it gets

	for range 20 {
		withRetry(ctx, ex, budget, fuseboxtest.Fn(inventory, 7))
	}
	fmt.Println("healthy: calls made:", inventory.Calls())

	ex.Breaker().Trip(breaker.Manual)
	_, err := withRetry(ctx, ex, budget, fuseboxtest.Fn(inventory, 7))
	fmt.Println("open:", err, "- calls made:", inventory.Calls(), "- retries:", budget.retries.Load())
	// Output:
	// healthy: calls made: 20
	// open: fusebox: inventory: rejected: open - calls made: 20 - retries: 0
}
