package executor_test

import (
	"context"
	"fmt"

	"github.com/fusebox-go/fusebox/executor"
)

// A running group gets more slots for payments and a new supplier; a
// configuration with an invalid field changes nothing.
func ExampleGroup_Reconfigure() {
	cfg := executor.GroupConfig{Suppliers: map[string]executor.Config{"payments": {Slots: 4}}}
	g, err := executor.NewGroup(cfg)
	if err != nil {
		panic(err)
	}
	defer g.Close(context.Background())

	cfg.Suppliers = map[string]executor.Config{"payments": {Slots: 8}, "search": {Slots: 20}}
	if err := g.Reconfigure(cfg); err != nil {
		panic(err)
	}
	pay, _ := g.Lookup("payments")
	fmt.Println(g.Names(), pay.Stats().Slots)

	bad := executor.GroupConfig{Suppliers: map[string]executor.Config{"payments": {Slots: -1}}}
	fmt.Println(g.Reconfigure(bad))
	fmt.Println(g.Names(), pay.Stats().Slots)
	// Output:
	// [payments search] 8
	// executor: payments: Slots must be ≥ 1, or 0 for the default 10, got -1
	// [payments search] 8
}
