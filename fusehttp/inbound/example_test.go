package inbound_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusehttp/inbound"
)

// A route whose handlers hang is shed on its own: /home keeps its slots.
func ExampleHandler() {
	g, err := executor.NewGroup(executor.GroupConfig{Dependencies: map[string]executor.Config{
		"GET /search": {Workers: 1},
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
