package fusehttp_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusehttp"
)

// FuzzTransportKey sends requests to hosts, ports and URLs a caller may be
// handed (user-supplied webhooks, link previews) through a Transport: none
// panics, every executor name stays within MaxNameLen, the group stays
// within its cap, and no error carries the URL's password.
func FuzzTransportKey(f *testing.F) {
	for _, s := range []string{"http://example.com/", "https://user:secret@Example.COM:8443/x?q=1",
		"http://[::1]:80/", "http://" + strings.Repeat("a", 300) + "/", "http://h:99999999/", "ws://h/", "http://%41/"} {
		f.Add(s)
	}
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	f.Cleanup(func() { slog.SetDefault(old) })
	g, err := executor.NewGroup(executor.GroupConfig{MaxSuppliers: 8})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { g.Close(f.Context()) })
	tr := &fusehttp.Transport{Group: g, Base: answer{}}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		req := (&http.Request{Method: http.MethodGet, URL: u, Header: http.Header{}}).WithContext(t.Context())
		resp, err := tr.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		} else if p, ok := u.User.Password(); ok && len(p) > 3 && strings.Contains(err.Error(), p) {
			t.Fatalf("the error %q carries the URL's password", err)
		}
		names := g.Names()
		if len(names) > 8+16 {
			t.Fatalf("%d executors for a cap of 8", len(names))
		}
		for _, n := range names {
			if len(n) > executor.MaxNameLen {
				t.Fatalf("an executor named with %d bytes", len(n))
			}
		}
	})
}
