package executor_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// Submit starts a protected call and returns its future at once.
func ExampleSubmit() {
	ctx := context.Background()
	ex, err := executor.New("quotes", executor.Config{Slots: 4, InvocationTimeout: 2 * time.Second})
	if err != nil {
		panic(err)
	}
	defer ex.Close(ctx)

	quote, err := executor.Submit(ctx, ex, func(ctx context.Context) (float64, error) {
		return 9.99, nil // call the supplier with ctx here
	})
	if err != nil {
		fmt.Println("refused:", err) // ErrOpen, ErrSaturated or ErrBusy: nothing was called
		return
	}
	// ... do other work while the quote is on its way ...
	price, err := quote.Await(ctx)
	fmt.Println(price, err)
	// Output: 9.99 <nil>
}

// Do is Submit and Await in one step.
func ExampleDo() {
	ctx := context.Background()
	ex, _ := executor.New("inventory", executor.Config{})
	defer ex.Close(ctx)

	n, err := executor.Do(ctx, ex, func(ctx context.Context) (int, error) { return 3, nil })
	fmt.Println(n, err)
	// Output: 3 <nil>
}

// A Group gives every supplier its own executor, sized per supplier,
// over one shared worker pool.
func ExampleGroup() {
	ctx := context.Background()
	g, err := executor.NewGroup(executor.GroupConfig{
		Default: executor.Config{Slots: 10, InvocationTimeout: time.Second},
		Suppliers: map[string]executor.Config{
			"payments": {Slots: 4, InvocationTimeout: 30 * time.Second, Breaker: breaker.Config{ResetTimeout: 45 * time.Second}},
		},
	})
	if err != nil {
		panic(err)
	}
	defer g.Close(ctx)

	for _, dep := range []string{"payments", "search"} {
		ex, _ := g.Executor(dep)
		fmt.Println(dep, ex.Stats().Slots)
	}
	// Output:
	// payments 4
	// search 10
}

// While the supplier's breaker is open, serve the last good value.
func ExampleDo_fallback() {
	ctx := context.Background()
	ex, _ := executor.New("prices", executor.Config{})
	defer ex.Close(ctx)
	cached := 42.0

	price := func() float64 {
		p, err := executor.Do(ctx, ex, func(ctx context.Context) (float64, error) { return 43, nil })
		if errors.Is(err, breaker.ErrOpen) || errors.Is(err, executor.ErrSaturated) || errors.Is(err, executor.ErrBusy) {
			return cached // fail fast, keep serving
		}
		if err != nil {
			return cached
		}
		cached = p
		return p
	}
	fmt.Println(price())
	ex.Breaker().Trip(breaker.Manual) // the supplier is in trouble
	fmt.Println(price())
	// Output:
	// 43
	// 43
}

// LogTransitions logs every breaker transition with log/slog.
func ExampleLogTransitions() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == "probe_at" || a.Key == "open_for_seconds" {
				return slog.Attr{} // keep the output stable for this example
			}
			return a
		},
	}))
	ex, _ := executor.New("payments", executor.Config{Breaker: breaker.Config{OnTransition: executor.LogTransitions(logger)}})
	defer ex.Close(context.Background())
	ex.Breaker().Trip(breaker.Saturation)
	ex.Breaker().Reset()
	// Output:
	// level=WARN msg="fusebox: breaker open" supplier=payments from=closed to=open reason=saturation
	// level=INFO msg="fusebox: breaker closed" supplier=payments from=open to=closed reason=manual
}
