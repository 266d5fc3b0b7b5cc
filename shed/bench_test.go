package shed

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/fusebox-go/fusebox/priority"
)

// discard is a ResponseWriter that keeps nothing, so that the benchmarks
// measure the handlers, not a recorder.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(p []byte) (int, error) { return len(p), nil }
func (d *discard) WriteHeader(int)             {}

// BenchmarkHandler is the per-request cost of Handler over a bare handler
// (the baseline, in the same run), with the real sampler running and no
// overload: the path every request of a healthy service takes.
func BenchmarkHandler(b *testing.B) {
	s, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	bare := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	tenant := func(*http.Request) string { return "acme" }
	for _, bc := range []struct {
		name string
		h    http.Handler
	}{
		{"bare", bare},
		{"shed", s.Handler(bare, nil)},
		{"shed-tenant", s.Handler(bare, tenant)},
	} {
		b.Run(bc.name+"/serial", func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			w := &discard{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				bc.h.ServeHTTP(w, req)
			}
		})
		b.Run(bc.name+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				req := httptest.NewRequest(http.MethodGet, "/", nil)
				w := &discard{h: http.Header{}}
				for pb.Next() {
					bc.h.ServeHTTP(w, req)
				}
			})
		})
	}
}

// BenchmarkRefusal is the cost of a refusal, without the 503 it answers.
func BenchmarkRefusal(b *testing.B) {
	s, err := newShedder(Config{Interval: time.Hour}, idle) // no tick undoes refusing
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	refusing(s, priority.Default)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Allow(priority.Default, ""); err == nil {
			b.Fatal("admitted")
		}
	}
}

// BenchmarkHandlerRefusal is the cost of a refusal through Handler: the
// decision and its 503 with Retry-After, short of the connection's I/O.
func BenchmarkHandlerRefusal(b *testing.B) {
	s, err := newShedder(Config{Interval: time.Hour}, idle)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	refusing(s, priority.Default)
	h := s.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { b.Fatal("admitted") }), nil)
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	w := &discard{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(w, req)
		clear(w.h)
	}
}
