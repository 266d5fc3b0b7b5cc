package fusehttp_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusehttp"
)

// TestOpenBodiesCostNoGoroutine opens 100 responses over loopback, reads
// none of their bodies, and looks at every goroutine of the process: none
// may be waiting inside the library for a body to end (net/http's own
// connection goroutines are the base transport's, with or without
// fusehttp). Each body still holds its slot until it is closed.
func TestOpenBodiesCostNoGoroutine(t *testing.T) {
	const n = 100
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "first chunk")
		w.(http.Flusher).Flush()
		select { // the rest of the body never comes until the test ends
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)

	g := newGroup(t, executor.GroupConfig{Default: executor.Config{
		Slots:             n,
		InvocationTimeout: time.Minute,
		Breaker:           breaker.Config{ResetTimeout: 2 * time.Minute},
	}})
	base := &http.Transport{MaxIdleConnsPerHost: n}
	defer base.CloseIdleConnections()
	client := &http.Client{Transport: &fusehttp.Transport{Group: g, Base: base, Key: func(*http.Request) string { return "api" }}}

	bodies := make([]io.ReadCloser, 0, n)
	for range n {
		resp, err := client.Get(srv.URL)
		require.NoError(t, err)
		bodies = append(bodies, resp.Body)
	}
	assert.Equal(t, n, stats(t, g, "api").InUse, "every open body holds its slot")
	assert.Zero(t, libraryGoroutines(), "goroutines inside the library with %d bodies open", n)

	for _, b := range bodies {
		require.NoError(t, b.Close())
	}
	assert.Zero(t, stats(t, g, "api").InUse, "Close gave every slot back before it returned")
}

// libraryGoroutines counts the goroutines with a frame of the library in
// their stack, other than the tests' own.
func libraryGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte("github.com/fusebox-go/fusebox/")) && !bytes.Contains(g, []byte("_test.")) {
			count++
		}
	}
	return count
}
