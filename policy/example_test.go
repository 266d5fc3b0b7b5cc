package policy_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/policy"
)

// A call that fails twice is retried, through the executor, and succeeds
// on its third attempt.
func ExampleRetry() {
	ctx := context.Background()
	ex, _ := executor.New("quotes", executor.Config{Slots: 4, InvocationTimeout: time.Second})
	defer ex.Close(ctx)
	retrier, _ := policy.NewRetrier(policy.RetryConfig{Backoff: time.Millisecond, Seed: 1})

	calls := 0
	price, err := policy.Retry(ctx, retrier, ex, func(ctx context.Context) (float64, error) {
		if calls++; calls < 3 {
			return 0, errors.New("quotes: 502 bad gateway")
		}
		return 9.99, nil
	})
	s := retrier.Stats()[0]
	fmt.Println(price, err, s.Attempts, s.Retries)
	// Output: 9.99 <nil> 3 2
}

// A call still running after the delay gets a hedge; the hedge answers
// first, and the slow attempt is cancelled.
func ExampleHedge() {
	ctx := context.Background()
	ex, _ := executor.New("search", executor.Config{Slots: 4, InvocationTimeout: time.Second})
	defer ex.Close(ctx)
	hedger, _ := policy.NewHedger(policy.HedgeConfig{Delay: 20 * time.Millisecond})

	var attempt = make(chan int, 2)
	attempt <- 1
	attempt <- 2
	hits, err := policy.Hedge(ctx, hedger, ex, func(ctx context.Context) (string, error) {
		if <-attempt == 1 {
			<-ctx.Done() // a slow replica: answers only when cancelled
			return "", ctx.Err()
		}
		return "3 hits", nil
	})
	s := hedger.Stats()[0]
	fmt.Println(hits, err, s.Hedges, s.Won)
	// Output: 3 hits <nil> 1 1
}
