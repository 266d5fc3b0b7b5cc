package inbound_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusehttp/inbound"
)

// discard is a ResponseWriter that keeps nothing, so that the benchmarks
// measure the handlers, not a recorder.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(p []byte) (int, error) { return len(p), nil }
func (d *discard) WriteHeader(int)             {}

// BenchmarkHandler is the per-request cost of Handler over a bare handler
// (the baseline, in the same run): a request as the mux hands it over,
// with its pattern set. make bench-inbound compares the two.
func BenchmarkHandler(b *testing.B) {
	g, err := executor.NewGroup(executor.GroupConfig{Default: executor.Config{Slots: 1000}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { g.Close(b.Context()) })
	bare := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	// lease is the executor's part alone: a Lease and its Done around the
	// bare handler, without the middleware.
	lease := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l, err := executor.LeaseIn(r.Context(), g, r.Pattern)
		if err != nil {
			b.Fatal(err)
		}
		bare(w, r)
		l.Done(nil)
	})
	for _, bc := range []struct {
		name string
		h    http.Handler
	}{
		{"bare", bare},
		{"lease", lease},
		{"fusebox", inbound.Handler(bare, inbound.Config{Group: g})},
	} {
		b.Run(bc.name+"/serial", func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, "/home", nil)
			req.Pattern = "GET /home"
			w := &discard{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				bc.h.ServeHTTP(w, req)
			}
		})
		b.Run(bc.name+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				req := httptest.NewRequest(http.MethodGet, "/home", nil)
				req.Pattern = "GET /home"
				w := &discard{h: http.Header{}}
				for pb.Next() {
					bc.h.ServeHTTP(w, req)
				}
			})
		})
	}
}

// BenchmarkBody is the cost of Config.BodyLimit for a 4 KiB upload that
// arrives at once: the handler reads the body from the connection
// (without) or from the copy Handler read before the slot (with).
func BenchmarkBody(b *testing.B) {
	g, err := executor.NewGroup(executor.GroupConfig{Default: executor.Config{Slots: 1000}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { g.Close(b.Context()) })
	payload := bytes.Repeat([]byte("u"), 4096)
	buf := make([]byte, 512)
	read := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for {
			if _, err := r.Body.Read(buf); err != nil {
				break
			}
		}
		w.WriteHeader(http.StatusOK)
	})
	for _, bc := range []struct {
		name string
		h    http.Handler
	}{
		{"bare", read},
		{"fusebox", inbound.Handler(read, inbound.Config{Group: g})},
		{"fusebox-BodyLimit", inbound.Handler(read, inbound.Config{Group: g, BodyLimit: 1 << 20})},
	} {
		b.Run(bc.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodPost, "/upload", nil)
			req.Pattern = "POST /upload"
			req.ContentLength = int64(len(payload))
			body := bytes.NewReader(payload)
			rc := io.NopCloser(body)
			w := &discard{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				body.Reset(payload)
				req.Body = rc
				bc.h.ServeHTTP(w, req)
			}
		})
	}
}
