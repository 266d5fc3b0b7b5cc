package breaker_test

import (
	"errors"
	"fmt"

	"github.com/fusebox-go/fusebox/breaker"
)

// The README's snippet: ask, call, report; fail fast while open.
func Example() {
	b, err := breaker.New(breaker.Config{
		Name:                "payments",
		ConsecutiveFailures: 3,
		OnTransition:        func(e breaker.Event) { fmt.Println(e) },
	})
	if err != nil {
		panic(err)
	}
	charge := func() error { return errors.New("connection refused") }

	for i := 1; i <= 4; i++ {
		p, err := b.Allow()
		if errors.Is(err, breaker.ErrOpen) {
			fmt.Printf("call %d: failing fast\n", i)
			continue
		}
		err = charge()
		p.Done(err)
		fmt.Printf("call %d: %v\n", i, err)
	}
	// Output:
	// call 1: connection refused
	// call 2: connection refused
	// payments: closed → open (consecutive-failures)
	// call 3: connection refused
	// call 4: failing fast
}

// Business errors are the supplier answering correctly: classify them as
// successes so that they never trip the breaker.
func ExampleConfig_classify() {
	errDeclined := errors.New("card declined")
	b, _ := breaker.New(breaker.Config{
		ConsecutiveFailures: 1,
		Classify: func(err error) breaker.Outcome {
			if errors.Is(err, errDeclined) {
				return breaker.Success
			}
			return breaker.DefaultClassify(err)
		},
	})
	p, _ := b.Allow()
	p.Done(errDeclined)
	fmt.Println(b.State())
	// Output: closed
}

// A trip rule of your own, as gobreaker's ReadyToTrip: here, at least 3
// calls in the window and 60 % of them failed. ConsecutiveFailures -1
// leaves it the only rule.
func ExampleConfig_readyToTrip() {
	b, _ := breaker.New(breaker.Config{
		ConsecutiveFailures: -1,
		WindowSize:          10,
		ReadyToTrip: func(c breaker.Counts) bool {
			return c.Calls >= 3 && c.FailureRate >= 0.6
		},
		OnTransition: func(e breaker.Event) { fmt.Println(e) },
	})
	for _, err := range []error{errors.New("refused"), nil, errors.New("refused")} {
		p, _ := b.Allow()
		p.Done(err)
	}
	// Output: closed → open (ready-to-trip)
}
