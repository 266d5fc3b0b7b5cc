package dashboard_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/dashboard"
	"github.com/fusebox-go/fusebox/executor"
)

// config is a small supplier: 2 slots, 1 s invocation timeout, a breaker
// that opens after 3 failures and probes after 2 s.
var config = executor.Config{
	Slots:             2,
	InvocationTimeout: time.Second,
	Breaker:           breaker.Config{ConsecutiveFailures: 3, ResetTimeout: 2 * time.Second},
}

// newExecutor makes a standalone executor that the test closes at its end
// (inside the synctest bubble when called from one).
func newExecutor(t *testing.T, name string) *executor.Executor {
	t.Helper()
	ex, err := executor.New(name, config)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, ex.Close(context.Background())) })
	return ex
}

// newGroup makes a group with an executor for each name.
func newGroup(t *testing.T, names ...string) *executor.Group {
	t.Helper()
	g, err := executor.NewGroup(executor.GroupConfig{Default: config})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, g.Close(context.Background())) })
	for _, n := range names {
		_, err := g.Executor(n)
		require.NoError(t, err)
	}
	return g
}

// newHandler makes a handler the test closes at its end.
func newHandler(t *testing.T, opts dashboard.Options) *dashboard.Handler {
	t.Helper()
	h, err := dashboard.New(opts)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, h.Close(context.Background())) })
	return h
}

// call runs n calls of fn on ex and waits for them.
func call(t *testing.T, ex *executor.Executor, n int, err error) {
	t.Helper()
	for range n {
		_, got := executor.Do(context.Background(), ex, func(context.Context) (int, error) { return 0, err })
		require.ErrorIs(t, got, err)
	}
}

// get serves one request and returns the recorded response.
func do(h http.Handler, method, path string, body string, header map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	for k, v := range header {
		if k == "Host" {
			r.Host = v
			continue
		}
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// snapshot fetches and decodes api/snapshot.
func snapshot(t *testing.T, h http.Handler) dashboard.Snapshot {
	t.Helper()
	w := do(h, http.MethodGet, "/api/snapshot", "", nil)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	var s dashboard.Snapshot
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &s))
	return s
}

// tile returns the supplier id of s.
func tile(t *testing.T, s dashboard.Snapshot, id string) dashboard.Supplier {
	t.Helper()
	for _, sup := range s.Suppliers {
		if sup.ID == id {
			return sup
		}
	}
	t.Fatalf("no supplier %q in the snapshot", id)
	return dashboard.Supplier{}
}

// event is one Server-Sent Event.
type event struct {
	name, id, data, retry string
}

// sseWriter is a ResponseWriter for streams: each Write is parsed into
// events and sent on events. With block set, Write waits until the write
// deadline (as a socket whose reader stopped reading does) or until block
// is closed.
type sseWriter struct {
	hdr    http.Header
	code   chan int
	events chan event
	block  chan struct{}

	mu       sync.Mutex
	deadline time.Time
	buf      string
}

func newSSEWriter() *sseWriter {
	return &sseWriter{hdr: http.Header{}, code: make(chan int, 1), events: make(chan event, 1000)}
}

func (w *sseWriter) Header() http.Header { return w.hdr }

func (w *sseWriter) WriteHeader(code int) { w.code <- code }

func (w *sseWriter) SetWriteDeadline(t time.Time) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.deadline = t
	return nil
}

func (w *sseWriter) Flush() {}

func (w *sseWriter) Write(p []byte) (int, error) {
	if w.block != nil {
		w.mu.Lock()
		d := time.Until(w.deadline)
		w.mu.Unlock()
		select {
		case <-w.block:
		case <-time.After(d):
			return 0, errDeadline
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf += string(p)
	for {
		i := strings.Index(w.buf, "\n\n")
		if i < 0 {
			break
		}
		var e event
		for _, line := range strings.Split(w.buf[:i], "\n") {
			k, v, _ := strings.Cut(line, ": ")
			switch k {
			case "event":
				e.name = v
			case "id":
				e.id = v
			case "data":
				e.data = v
			case "retry":
				e.retry = v
			}
		}
		w.buf = w.buf[i+2:]
		w.events <- e
	}
	return len(p), nil
}

var errDeadline = &deadlineError{}

type deadlineError struct{}

func (*deadlineError) Error() string { return "write deadline passed" }

// stream opens api/events on h with w and returns a function that ends the
// request and waits until the handler has returned.
func stream(h http.Handler, w http.ResponseWriter) (done <-chan struct{}, cancel func()) {
	return streamFrom(h, w, "")
}

// streamFrom is stream from the client address addr ("" for httptest's
// default).
func streamFrom(h http.Handler, w http.ResponseWriter, addr string) (done <-chan struct{}, cancel func()) {
	ctx, cancelCtx := context.WithCancel(context.Background())
	r := httptest.NewRequest(http.MethodGet, "/api/events", nil).WithContext(ctx)
	if addr != "" {
		r.RemoteAddr = addr
	}
	d := make(chan struct{})
	go func() {
		defer close(d)
		h.ServeHTTP(w, r)
	}()
	return d, func() {
		cancelCtx()
		<-d
	}
}
