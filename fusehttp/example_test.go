package fusehttp_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusehttp"
)

// An upstream that answers 503: the responses reach the caller, and the
// breaker counts them as failures until it opens; then requests fail fast
// without reaching the upstream.
func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
	}))
	defer srv.Close()

	g, err := executor.NewGroup(executor.GroupConfig{
		Default:      executor.Config{Breaker: breaker.Config{ConsecutiveFailures: 2}},
		OnTransition: func(e breaker.Event) { fmt.Println("event:", e) },
	})
	if err != nil {
		panic(err)
	}
	defer g.Close(context.Background())
	// One executor for this upstream, named "api" (the default key would be
	// its host:port).
	tr := &fusehttp.Transport{Group: g, Key: func(*http.Request) string { return "api" }}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}

	for range 3 {
		resp, err := client.Get(srv.URL)
		if err != nil {
			fmt.Println("refused without a request:", errors.Is(err, breaker.ErrOpen))
			continue
		}
		resp.Body.Close() // ends the exchange: the outcome is recorded now
		fmt.Println("status:", resp.StatusCode)
	}
	// Output:
	// status: 503
	// event: api: closed → open (consecutive-failures)
	// status: 503
	// refused without a request: true
}

// Logging every transition with log/slog. (The handler here drops the
// time attributes only so that the output is the same on every run.)
func Example_logging() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
	}))
	defer srv.Close()

	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == "probe_at" {
				return slog.Attr{}
			}
			return a
		},
	}))
	g, err := executor.NewGroup(executor.GroupConfig{
		Default:      executor.Config{Breaker: breaker.Config{ConsecutiveFailures: 1}},
		OnTransition: executor.LogTransitions(logger),
	})
	if err != nil {
		panic(err)
	}
	defer g.Close(context.Background())
	tr := &fusehttp.Transport{Group: g, Key: func(*http.Request) string { return "inventory" }}
	defer tr.CloseIdleConnections()

	resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	// Output:
	// level=WARN msg="fusebox: breaker open" supplier=inventory from=closed to=open reason=consecutive-failures error="fusehttp: supplier answered 502 Bad Gateway"
}

// A route whose handlers hang is shed on its own: /home keeps its slots.
func ExampleHandler() {
	g, err := executor.NewGroup(executor.GroupConfig{Dependencies: map[string]executor.Config{
		"GET /search": {Workers: 1},
	}})
	if err != nil {
		panic(err)
	}
	defer g.Close(context.Background())
	cfg := fusehttp.HandlerConfig{Group: g}
	hung := make(chan struct{})
	entered := make(chan struct{})
	mux := http.NewServeMux()
	mux.Handle("GET /search", fusehttp.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-hung
	}), cfg))
	mux.Handle("GET /home", fusehttp.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
