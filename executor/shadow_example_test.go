package executor_test

import (
	"context"
	"fmt"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// A supplier rolled out in shadow mode: the operator trips its breaker,
// and calls still go through, counted as what enforce mode would have
// refused. Reconfigure then switches it to enforce, without a restart.
func ExampleConfig_shadow() {
	cfg := executor.Config{Slots: 4, InvocationTimeout: time.Second, Shadow: true,
		Breaker: breaker.Config{ResetTimeout: time.Minute,
			OnTransition: func(e breaker.Event) { fmt.Println(e) }}}
	ex, err := executor.New("payments", cfg)
	if err != nil {
		panic(err)
	}
	defer ex.Close(context.Background())

	ex.Breaker().Trip(breaker.Manual)
	v, err := executor.Do(context.Background(), ex, func(context.Context) (string, error) { return "paid", nil })
	st := ex.Stats()
	fmt.Println(v, err, "| would have refused:", st.Shadowed.Open, "| refused:", st.Rejected.Open)

	cfg.Shadow = false
	if err := ex.Reconfigure(cfg); err != nil {
		panic(err)
	}
	_, err = executor.Do(context.Background(), ex, func(context.Context) (string, error) { return "paid", nil })
	fmt.Println(err)
	// Output:
	// payments: closed → open (manual) [shadow]
	// paid <nil> | would have refused: 1 | refused: 0
	// fusebox: payments: rejected: open
}
