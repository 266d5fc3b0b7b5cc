package inbound_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusehttp/inbound"
)

// FuzzHandlerKey sends requests with whatever method, path and headers a
// client chooses to routes behind inbound.Handler: none panics, executors
// are made only for the patterns the service registered, and no answer
// inbound writes itself quotes the request's path.
func FuzzHandlerKey(f *testing.F) {
	for _, s := range [][2]string{{"GET", "/orders/1"}, {"POST", "/upload"}, {"GET", "/%2e%2e/admin"},
		{"DELETE", "/" + strings.Repeat("x", 300)}, {"GET", "//catalog"}, {"PRI", "*"}} {
		f.Add(s[0], s[1], "critical")
	}
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	f.Cleanup(func() { slog.SetDefault(old) })
	g, err := executor.NewGroup(executor.GroupConfig{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { g.Close(f.Context()) })
	patterns := []string{"GET /orders/{id}", "POST /upload", "/catalog/"}
	mux := http.NewServeMux()
	for _, p := range patterns {
		mux.HandleFunc(p, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	}
	h := inbound.Handler(mux, inbound.Config{Group: g})
	f.Fuzz(func(t *testing.T, method, path, prio string) {
		req, err := http.NewRequest(method, "http://svc"+path, nil)
		if err != nil {
			return
		}
		req.Header.Set("Fusebox-Priority", prio)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		for _, n := range g.Names() {
			if !slices.Contains(patterns, n) {
				t.Fatalf("an executor %q for no registered pattern", n)
			}
		}
		if w.Code >= 500 && len(req.URL.Path) > 3 && strings.Contains(w.Body.String(), req.URL.Path) {
			t.Fatalf("a %d answer quotes the path: %q", w.Code, w.Body)
		}
	})
}
