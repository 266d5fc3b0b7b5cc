package fusehttp_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
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
	assert.Equal(t, maxSuppliers+1, len(names), "executors: the hosts made first, and the overflow")
	ov, ok := g.Lookup("(overflow)")
	require.True(t, ok)
	st := ov.Stats()
	assert.Equal(t, uint64(hosts-maxSuppliers), st.Successes, "the other hosts' requests ran on the overflow")
	assert.Less(t, grown, int64(maxSuppliers*8<<10), "heap grew by %d B for %d executors", grown, maxSuppliers+1)
	t.Logf("%d hosts: %d executors, heap +%d B", hosts, len(names), grown)
}
