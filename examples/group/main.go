// Command group shows one executor per supplier: a Group with a default
// configuration and one of its own for "reports". The hung "reports"
// supplier fills its own two slots: while its calls are young a call that
// finds them full is refused alone (busy); once they are stuck (older than
// half its 1 s timeout, as it has no latency history) the next one trips
// its breaker. "search" and "prices" never notice.
//
//	go run ./examples/group
package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

func main() {
	g, err := executor.NewGroup(executor.GroupConfig{
		Default: executor.Config{Slots: 8, InvocationTimeout: 200 * time.Millisecond},
		Suppliers: map[string]executor.Config{
			"reports": {Slots: 2, InvocationTimeout: time.Second, Breaker: breaker.Config{ResetTimeout: 2 * time.Second}},
		},
		OnTransition: func(e breaker.Event) { fmt.Println("event:", e) },
	})
	if err != nil {
		panic(err)
	}
	defer g.Close(context.Background())
	ctx := context.Background()

	call := func(dep string, d time.Duration) error {
		ex, err := g.Executor(dep)
		if err != nil {
			return err
		}
		_, err = executor.Submit(ctx, ex, func(ctx context.Context) (int, error) {
			select {
			case <-time.After(d):
				return 1, nil
			case <-ctx.Done():
				return 0, ctx.Err()
			}
		})
		return err
	}
	for round := 1; round <= 4; round++ {
		if round == 4 {
			time.Sleep(600 * time.Millisecond) // the two hung reports calls are stuck now
		}
		for _, dep := range []string{"search", "prices", "reports"} {
			d := 10 * time.Millisecond
			if dep == "reports" {
				d = time.Hour // hangs
			}
			err := call(dep, d)
			fmt.Printf("round %d %-8s %s\n", round, dep, outcome(err))
		}
	}
	time.Sleep(50 * time.Millisecond)
	for _, name := range g.Names() {
		if ex, ok := g.Lookup(name); ok {
			s := ex.Stats()
			fmt.Printf("%-8s slots=%d in_use=%d state=%s\n", name, s.Slots, s.InUse, s.Breaker.State)
		}
	}
}

func outcome(err error) string {
	var rej *executor.RejectedError
	switch {
	case err == nil:
		return "admitted"
	case errors.As(err, &rej) && rej.Reason == executor.RejectedBusy:
		return "refused: busy (young calls; the breaker stays closed)"
	case errors.Is(err, executor.ErrSaturated), errors.Is(err, executor.ErrBusy):
		return "refused: stuck calls (the breaker trips)"
	case errors.Is(err, breaker.ErrOpen):
		return "refused: breaker open"
	}
	return err.Error()
}
