package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/dashboard"
	"github.com/fusebox-go/fusebox/executor"
)

// Mount the dashboard of a Group on an admin mux, and read its JSON
// snapshot as a script would.
func Example() {
	g, err := executor.NewGroup(executor.GroupConfig{Default: executor.Config{
		Slots: 10, InvocationTimeout: time.Second,
		Breaker: breaker.Config{ResetTimeout: 2 * time.Second},
	}})
	if err != nil {
		panic(err)
	}
	defer g.Close(context.Background())
	payments, _ := g.Executor("payments")
	g.Executor("catalog")
	payments.Breaker().Trip(breaker.Manual)

	dash, err := dashboard.New(dashboard.Options{}) // no operator actions
	if err != nil {
		panic(err)
	}
	defer dash.Close(context.Background())
	dash.AddGroup(g)
	admin := http.NewServeMux() // serve it on an admin listener only
	admin.Handle("/fusebox/", http.StripPrefix("/fusebox", dash))

	w := httptest.NewRecorder()
	admin.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/fusebox/api/snapshot", nil))
	var snap dashboard.Snapshot
	if err := json.Unmarshal(w.Body.Bytes(), &snap); err != nil {
		panic(err)
	}
	for _, s := range snap.Suppliers { // trouble first
		fmt.Printf("%s: %s (%s), %d of %d slots in use\n", s.ID, s.State, s.Reason, s.InUse, s.Slots)
	}
	// Output:
	// payments: open (manual), 0 of 10 slots in use
	// catalog: closed (none), 0 of 10 slots in use
}
