package executor_test

import (
	"context"
	"fmt"

	"github.com/fusebox-go/fusebox/executor"
)

// A running group gets more slots for payments and a new supplier; a
// configuration with an invalid field changes nothing.
func ExampleGroup_Reconfigure() {
	cfg := executor.GroupConfig{Dependencies: map[string]executor.Config{"payments": {Workers: 4}}}
	g, err := executor.NewGroup(cfg)
	if err != nil {
		panic(err)
	}
	defer g.Close(context.Background())

	cfg.Dependencies = map[string]executor.Config{"payments": {Workers: 8}, "search": {Workers: 20}}
	if err := g.Reconfigure(cfg); err != nil {
		panic(err)
	}
	pay, _ := g.Lookup("payments")
	fmt.Println(g.Names(), pay.Stats().Workers)

	bad := executor.GroupConfig{Dependencies: map[string]executor.Config{"payments": {Workers: -1}}}
	fmt.Println(g.Reconfigure(bad))
	fmt.Println(g.Names(), pay.Stats().Workers)
	// Output:
	// [payments search] 8
	// executor: payments: Workers must be ≥ 1, or 0 for the default 10, got -1
	// [payments search] 8
}
