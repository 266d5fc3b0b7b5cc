package inbound_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusehttp/inbound"
	"github.com/fusebox-go/fusebox/priority"
)

// A route whose handlers hang is shed on its own: /home keeps its slots.
func ExampleHandler() {
	g, err := executor.NewGroup(executor.GroupConfig{Suppliers: map[string]executor.Config{
		"GET /search": {Slots: 1},
	}})
	if err != nil {
		panic(err)
	}
	defer g.Close(context.Background())
	cfg := inbound.Config{Group: g}
	hung := make(chan struct{})
	entered := make(chan struct{})
	mux := http.NewServeMux()
	mux.Handle("GET /search", inbound.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-hung
	}), cfg))
	mux.Handle("GET /home", inbound.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "welcome")
	}), cfg))

	done := make(chan struct{})
	go func() {
		mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/search", nil))
		close(done)
	}()
	<-entered // the only /search slot is taken
	for _, path := range []string{"/search", "/home"} {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		fmt.Println(path, rec.Code, rec.Header().Get("Retry-After"))
	}
	close(hung)
	<-done
	// Output:
	// /search 503 1
	// /home 200
}

// A handler answers a refusal of the supplier it calls as inbound answers
// its own: 503 with the time to the supplier's probe.
func ExampleWriteRefusal() {
	payments, err := executor.New("payments", executor.Config{Breaker: breaker.Config{ResetTimeout: 20 * time.Second}})
	if err != nil {
		panic(err)
	}
	defer payments.Close(context.Background())
	payments.Breaker().Trip(breaker.Manual) // payments is down
	checkout := func(w http.ResponseWriter, r *http.Request) {
		receipt, err := executor.Do(r.Context(), payments, func(ctx context.Context) (string, error) {
			return "paid", nil // the call to payments
		})
		if inbound.WriteRefusal(w, err) {
			return
		}
		if err != nil {
			http.Error(w, "payment failed", http.StatusBadGateway)
			return
		}
		fmt.Fprintln(w, receipt)
	}
	rec := httptest.NewRecorder()
	checkout(rec, httptest.NewRequest(http.MethodPost, "/checkout", nil))
	fmt.Println(rec.Code, rec.Header().Get("Retry-After"), rec.Body.String())
	// Output: 503 20 Service Unavailable
}

// Only the service's own network may choose a request's priority: a
// client from outside that asks to be critical is served as default.
func ExampleTrustedPriority() {
	own := inbound.PeerIn(netip.MustParsePrefix("10.0.0.0/8"))
	h := inbound.TrustedPriority("", own)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Println(r.RemoteAddr, priority.From(r.Context()))
	}))
	for _, peer := range []string{"10.1.2.3:5000", "203.0.113.9:5000"} {
		req := httptest.NewRequest(http.MethodGet, "/checkout", nil)
		req.RemoteAddr = peer
		req.Header.Set(priority.Header, "critical")
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	// Output:
	// 10.1.2.3:5000 critical
	// 203.0.113.9:5000 default
}
