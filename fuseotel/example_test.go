package fuseotel_test

import (
	"context"
	"fmt"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fuseotel"
)

func ExampleRegister() {
	g, _ := executor.NewGroup(executor.GroupConfig{})
	defer g.Close(context.Background())

	reader := sdkmetric.NewManualReader() // a PeriodicReader and an exporter in a real service
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	if _, err := fuseotel.Register(g, mp, fuseotel.Opts{}); err != nil {
		panic(err)
	}

	executor.DoIn(context.Background(), g, "payments", func(context.Context) (string, error) { return "paid", nil })

	var rm metricdata.ResourceMetrics
	reader.Collect(context.Background(), &rm)
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if m.Name == "fusebox.calls" {
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				if outcome, _ := dp.Attributes.Value("outcome"); outcome.AsString() == "success" {
					fmt.Println("payments, successful calls:", dp.Value)
				}
			}
		}
	}
	// Output: payments, successful calls: 1
}
