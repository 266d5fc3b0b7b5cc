package metrics_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/metrics"
)

func ExampleNewCollector() {
	g, err := executor.NewGroup(executor.GroupConfig{})
	if err != nil {
		panic(err)
	}
	defer g.Close(context.Background())
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics.NewCollector(g, metrics.Opts{}))
	// Serve it: http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))

	ex, _ := g.Executor("payments")
	executor.Do(context.Background(), ex, func(context.Context) (string, error) { return "paid", nil })
	executor.Do(context.Background(), ex, func(context.Context) (string, error) { return "", errors.New("declined") })

	families, err := reg.Gather()
	if err != nil {
		panic(err)
	}
	for _, mf := range families {
		if mf.GetName() != "fusebox_calls_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			fmt.Print(mf.GetName(), "{")
			for i, l := range m.GetLabel() {
				if i > 0 {
					fmt.Print(",")
				}
				fmt.Printf("%s=%q", l.GetName(), l.GetValue())
			}
			fmt.Println("}", m.GetCounter().GetValue())
		}
	}
	// Output:
	// fusebox_calls_total{outcome="failure",supplier="payments"} 1
	// fusebox_calls_total{outcome="ignored",supplier="payments"} 0
	// fusebox_calls_total{outcome="success",supplier="payments"} 1
}
