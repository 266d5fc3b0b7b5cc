package readiness_test

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/readiness"
)

// Mount the Checker as the readiness endpoint: payments is critical,
// recommendations is not.
func ExampleChecker() {
	g, _ := executor.NewGroup(executor.GroupConfig{
		Suppliers: map[string]executor.Config{"payments": {}, "recommendations": {}},
	})
	defer g.Close(context.Background())
	ready, err := readiness.New(readiness.Config{Group: g, Critical: map[string]bool{"payments": true}})
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(ready) // mux.Handle("GET /readyz", ready) in a service
	defer srv.Close()
	probe := func() {
		resp, err := srv.Client().Get(srv.URL)
		if err != nil {
			panic(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		fmt.Println(resp.StatusCode, ready.Report().State)
	}

	probe()
	recs, _ := g.Lookup("recommendations")
	recs.Breaker().Trip(breaker.Saturation)
	probe() // recommendations is open: degraded, still in the load balancer
	payments, _ := g.Lookup("payments")
	payments.Breaker().Trip(breaker.Saturation)
	probe() // payments is open: out of the load balancer
	// Output:
	// 200 ready
	// 200 degraded
	// 503 unready
}

// Report is for a readiness handler of your own, which may add checks of
// its own (a shutdown flag, a warm cache).
func ExampleChecker_Report() {
	ex, _ := executor.New("payments", executor.Config{})
	defer ex.Close(context.Background())
	ready, _ := readiness.New(readiness.Config{Executors: []*executor.Executor{ex}})
	ex.Breaker().Trip(breaker.Manual)
	r := ready.Report()
	fmt.Println(r.State)
	for _, s := range r.Suppliers {
		fmt.Println(s.Name, s.State, s.Breaker, s.Reason, s.Critical)
	}
	// Output:
	// degraded
	// payments unready open manual false
}
