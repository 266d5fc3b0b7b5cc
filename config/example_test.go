package config_test

import (
	"fmt"
	"log/slog"

	"github.com/fusebox-go/fusebox/config"
	"github.com/fusebox-go/fusebox/executor"
)

func ExampleParse() {
	cfg, err := config.Parse([]byte(`{
		"default": {"slots": 10, "queue": 50, "invocationTimeout": "2s"},
		"suppliers": {
			"payments": {"slots": 4, "queue": 0, "invocationTimeout": "30s", "breaker": {"resetTimeout": "45s"}}
		}
	}`))
	if err != nil {
		panic(err)
	}
	// What a file cannot hold is set in code.
	cfg.OnTransition = executor.LogTransitions(slog.Default())
	pay := cfg.Suppliers["payments"]
	fmt.Println(cfg.Default.Slots, cfg.Default.Queue, cfg.Default.InvocationTimeout)
	fmt.Println(pay.Slots, pay.Queue, pay.InvocationTimeout, pay.Breaker.ResetTimeout)

	_, err = config.Parse([]byte(`{"suppliers": {"payments": {"slots": 4, "slots": 5, "invocationTimeout": 30}}}`))
	fmt.Println(err)
	// Output:
	// 10 50 2s
	// 4 0 30s 45s
	// config: suppliers.payments.slots: the key "slots" appears twice in this object
	// config: suppliers.payments.invocationTimeout: want a duration string such as "30s", got 30
}
