package fusehttp_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusehttp"
)

// wait bounds every wait for an event of a real server: generous, since it
// only matters when a test is about to fail.
const wait = 10 * time.Second

// upstream is a loopback HTTP server whose behaviour the test switches:
// healthy (answers with its status), or hung (answers nothing until the
// request's context ends: the client gave up or the server closes).
type upstream struct {
	*httptest.Server
	hits    atomic.Int64  // requests that reached the server
	inside  atomic.Int64  // requests being handled right now
	arrived chan struct{} // one value per request that reached the server

	mu     sync.Mutex
	status int
	hung   bool
}

func newUpstream(t *testing.T) *upstream {
	t.Helper()
	u := &upstream{status: http.StatusOK, arrived: make(chan struct{}, 100)}
	u.Server = httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(u.Close)
	return u
}

func (u *upstream) serve(w http.ResponseWriter, r *http.Request) {
	u.hits.Add(1)
	u.inside.Add(1)
	defer u.inside.Add(-1)
	select {
	case u.arrived <- struct{}{}:
	default:
	}
	io.Copy(io.Discard, r.Body)
	u.mu.Lock()
	status, hung := u.status, u.hung
	u.mu.Unlock()
	if hung {
		<-r.Context().Done()
		return
	}
	w.WriteHeader(status)
	io.WriteString(w, http.StatusText(status))
}

// awaitArrivals waits until n more requests have reached the server.
func (u *upstream) awaitArrivals(t *testing.T, n int) {
	t.Helper()
	for i := range n {
		select {
		case <-u.arrived:
		case <-time.After(wait):
			t.Fatalf("only %d of %d requests reached the server within %v", i, n, wait)
		}
	}
}

func (u *upstream) set(status int, hung bool) {
	u.mu.Lock()
	u.status, u.hung = status, hung
	u.mu.Unlock()
}

// key is the executor name the default key gives the server's requests.
func (u *upstream) key(t *testing.T) string {
	t.Helper()
	return hostPort(t, u.URL)
}

// hostPort is the default key of requests to a test server's URL, which
// has a numeric host and a port.
func hostPort(t *testing.T, rawURL string) string {
	t.Helper()
	parsed, err := url.Parse(rawURL)
	require.NoError(t, err)
	return parsed.Host
}

// newGroup makes a group that the test closes at its end.
func newGroup(t *testing.T, cfg executor.GroupConfig) *executor.Group {
	t.Helper()
	g, err := executor.NewGroup(cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		require.NoError(t, g.Close(ctx))
	})
	return g
}

// newClient makes a client over a Transport with a default base, whose
// connections the test closes at its end.
func newClient(t *testing.T, tr *fusehttp.Transport) *http.Client {
	t.Helper()
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// quick is a configuration with short timeouts, for suppliers that the test
// lets hang. Short, not tight: a test that uses it must get its requests to
// the server, and its next steps done, before a hung call times out or the
// breaker's open period ends, and a loaded machine can stall a loopback
// round trip for hundreds of milliseconds (300 ms was not enough).
func quick(workers int) executor.Config {
	return executor.Config{
		Slots:             workers,
		InvocationTimeout: 2 * time.Second,
		Breaker:           breaker.Config{ResetTimeout: 3 * time.Second},
	}
}

func stats(t *testing.T, g *executor.Group, key string) executor.Stats {
	t.Helper()
	ex, err := g.Executor(key)
	require.NoError(t, err)
	return ex.Stats()
}

// get sends a GET and returns the status and the whole body, closing it.
func get(t *testing.T, c *http.Client, u string) (int, string, error) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b), nil
}

// recordingBody is a request body that records whether anyone read or
// closed it.
type recordingBody struct {
	reads, closes atomic.Int64
	r             io.Reader
}

func newRecordingBody(s string) *recordingBody {
	return &recordingBody{r: strings.NewReader(s)}
}

func (b *recordingBody) Read(p []byte) (int, error) {
	b.reads.Add(1)
	return b.r.Read(p)
}

func (b *recordingBody) Close() error {
	b.closes.Add(1)
	return nil
}

// transitions writes events as "from>to:reason", one string each.
func transitions(events []breaker.Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.From.String() + ">" + e.To.String() + ":" + e.Reason.String()
	}
	return out
}
