package fusehttp_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusehttp"
)

// BenchmarkRoundTrip is the per-request cost of the Transport over an
// in-memory base, without the network: a GET whose response has no body,
// one whose body is read to EOF and closed, and a POST with a body.
func BenchmarkRoundTrip(b *testing.B) {
	g, err := executor.NewGroup(executor.GroupConfig{Default: executor.Config{Slots: 1000}})
	require.NoError(b, err)
	b.Cleanup(func() { g.Close(context.Background()) })
	base := fakeBase(func(r *http.Request) (*http.Response, error) {
		if r.Body != nil {
			io.Copy(io.Discard, r.Body)
		}
		if r.URL.Path == "/empty" {
			return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
		}
		return &http.Response{StatusCode: http.StatusOK, ContentLength: 2, Body: io.NopCloser(strings.NewReader("ok"))}, nil
	})
	tr := &fusehttp.Transport{Group: g, Base: base}
	for _, bc := range []struct {
		name, method, path string
		body               bool
	}{
		{"get-no-body", http.MethodGet, "/empty", false},
		{"get-body", http.MethodGet, "/body", false},
		{"post-body", http.MethodPost, "/body", true},
	} {
		for _, rt := range []struct {
			name string
			tr   http.RoundTripper
		}{{bc.name, tr}, {bc.name + "-base", base}} {
			b.Run(rt.name, func(b *testing.B) { roundTrips(b, rt.tr, bc.method, bc.path, bc.body) })
		}
	}
}

// roundTrips sends requests through rt: the Transport, or its base alone
// (the baseline of the same run).
func roundTrips(b *testing.B, rt http.RoundTripper, method, path string, withBody bool) {
	b.ReportAllocs()
	for b.Loop() {
		var body io.Reader
		if withBody {
			body = strings.NewReader("order=42")
		}
		req, err := http.NewRequest(method, "http://api.test"+path, body)
		if err != nil {
			b.Fatal(err)
		}
		resp, err := rt.RoundTrip(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}
