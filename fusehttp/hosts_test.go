package fusehttp_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusehttp"
)

// answer is a Base that answers every request at once, without a network.
type answer struct{}

func (answer) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: r}, nil
}

// A million distinct hosts, as user-supplied URLs would bring, make no more
// executors than MaxSuppliers (the others share the overflow executor),
// and the heap stays within what those executors cost.
func TestDistinctHostsDoNotGrowTheGroupWithoutBound(t *testing.T) {
	hosts := 1_000_000
	if raceEnabled {
		hosts = 20_000 // the race detector makes each request about 20 times slower: still 20 × the cap
	}
	const maxSuppliers = 1000
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer slog.SetDefault(old)

	// A timeout out of reach: on a loaded machine one of the many requests
	// can wait past the default second for a CPU, and would count a
	// timeout instead of the success this test counts.
	g, err := executor.NewGroup(executor.GroupConfig{MaxSuppliers: maxSuppliers, Default: executor.Config{
		InvocationTimeout: time.Minute, Breaker: breaker.Config{ResetTimeout: 2 * time.Minute}}})
	require.NoError(t, err)
	defer g.Close(t.Context())
	tr := &fusehttp.Transport{Group: g, Base: answer{}}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	ctx := t.Context()
	before := heap()
	for i := range hosts {
		req := (&http.Request{Method: http.MethodGet, Header: http.Header{},
			URL: &url.URL{Scheme: "http", Host: "h" + strconv.Itoa(i) + ".example", Path: "/"}}).WithContext(ctx)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			require.NoError(t, err, "host %d", i)
		}
		resp.Body.Close()
	}
	grown := int64(heap()) - int64(before)

	names := g.Names()
	assert.LessOrEqual(t, len(names), maxSuppliers+16, "executors: the hosts made first, and at most 16 overflow executors")
	var overflowed uint64
	for _, n := range names {
		if strings.HasPrefix(n, "(overflow ") {
			ov, ok := g.Lookup(n)
			require.True(t, ok)
			overflowed += ov.Stats().Successes
		}
	}
	assert.Equal(t, uint64(hosts-maxSuppliers), overflowed, "the other hosts' requests ran on the overflow executors")
	assert.Less(t, grown, int64((maxSuppliers+16)*8<<10), "heap grew by %d B for %d executors", grown, len(names))
	t.Logf("%d hosts: %d executors, heap +%d B", hosts, len(names), grown)
}

// Host names of 256 KiB, which a service that calls user-supplied URLs may
// be handed, make no executor (nor metric series) each: they share the
// overflow executors, and a refusal's error stays short.
func TestHugeHostNamesAreBounded(t *testing.T) {
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer slog.SetDefault(old)
	g, err := executor.NewGroup(executor.GroupConfig{})
	require.NoError(t, err)
	defer g.Close(t.Context())
	tr := &fusehttp.Transport{Group: g, Base: answer{}}
	for i := range 50 {
		host := strings.Repeat("a", 256<<10) + strconv.Itoa(i) + ".example"
		req := (&http.Request{Method: http.MethodGet, Header: http.Header{},
			URL: &url.URL{Scheme: "http", Host: host, Path: "/"}}).WithContext(t.Context())
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		resp.Body.Close()
	}
	names := g.Names()
	assert.LessOrEqual(t, len(names), 16, "only overflow executors")
	for _, n := range names {
		assert.LessOrEqual(t, len(n), executor.MaxNameLen)
	}
	// A refusal of such a host names its overflow executor, not the host.
	ov, _ := g.Lookup(names[0])
	ov.Breaker().ForceOpen()
	for i := range 50 {
		host := strings.Repeat("a", 256<<10) + strconv.Itoa(i) + ".example"
		req := (&http.Request{Method: http.MethodGet, Header: http.Header{},
			URL: &url.URL{Scheme: "http", Host: host, Path: "/"}}).WithContext(t.Context())
		if _, err := tr.RoundTrip(req); err != nil {
			require.ErrorIs(t, err, breaker.ErrOpen)
			assert.Less(t, len(err.Error()), 200, "the error stays short")
			return
		}
	}
	t.Fatal("no host hashed to the forced-open overflow executor")
}
