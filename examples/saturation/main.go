// Command saturation shows the core idea of fusebox in a few seconds: a
// supplier hangs and its bulkhead fills. While the calls holding the slots
// are young the bulkhead is merely busy, and a call that finds no free
// slot is refused alone; once half of them are stuck (here: older than
// half the 500 ms timeout, since the supplier has no latency history yet)
// the call that finds no free slot trips the breaker. Later callers fail
// fast and fall back to a cached value; after the reset timeout one probe
// finds a free slot, the supplier has recovered, and the breaker closes.
//
//	go run ./examples/saturation
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fuseboxtest"
)

func main() {
	start := time.Now()
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.String("t", time.Since(start).Round(10*time.Millisecond).String())
			}
			return a
		},
	}))

	// 3 slots, calls time out after 500 ms, the breaker waits 700 ms (more
	// than the timeout: New refuses anything else) before it probes.
	ex, err := executor.New("payments", executor.Config{
		Slots:             3,
		InvocationTimeout: 500 * time.Millisecond,
		Breaker:           breaker.Config{ResetTimeout: 700 * time.Millisecond, OnTransition: executor.LogTransitions(logger)},
	})
	if err != nil {
		panic(err)
	}
	defer ex.Close(context.Background())

	// The supplier never answers; each call gives up at its timeout.
	payments, err := fuseboxtest.NewFake(fuseboxtest.Phase{Do: fuseboxtest.Hang()})
	if err != nil {
		panic(err)
	}
	charge := fuseboxtest.Fn(payments, "receipt-42")

	cached := "receipt from cache"
	ctx := context.Background()
	// 12 payment requests, one every 100 ms; the supplier heals at 1 s.
	for i := 1; i <= 12; i++ {
		if i == 10 {
			payments.Set(fuseboxtest.Healthy(0))
			fmt.Printf("%5s  the supplier has recovered\n", time.Since(start).Round(10*time.Millisecond))
		}
		f, err := executor.Submit(ctx, ex, charge)
		switch {
		case busy(err):
			fmt.Printf("%5s  request %2d: no free slot, young calls -> refused alone, serve %q\n", since(start), i, cached)
		case errors.Is(err, executor.ErrSaturated), errors.Is(err, executor.ErrBusy):
			fmt.Printf("%5s  request %2d: no free slot, stuck calls -> breaker trips now, serve %q\n", since(start), i, cached)
		case errors.Is(err, breaker.ErrOpen):
			fmt.Printf("%5s  request %2d: breaker open -> fail fast, serve %q\n", since(start), i, cached)
		case err != nil:
			panic(err)
		default:
			go func(i int) {
				v, err := f.Await(ctx)
				fmt.Printf("%5s  request %2d: %v %v\n", since(start), i, v, err)
			}(i)
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(600 * time.Millisecond) // let the last calls finish
	s := ex.Stats()
	fmt.Printf("done: %d ok, %d timed out, %d refused while open, %d refused busy, %d refused stuck\n",
		s.Successes, s.Timeouts, s.Rejected.Open, s.Rejected.Busy, s.Rejected.Saturated)
}

// busy reports whether err is a busy refusal: the bulkhead was full of
// young calls, the breaker stayed closed.
func busy(err error) bool {
	var rej *executor.RejectedError
	return errors.As(err, &rej) && rej.Reason == executor.RejectedBusy
}

func since(t time.Time) time.Duration { return time.Since(t).Round(10 * time.Millisecond) }
