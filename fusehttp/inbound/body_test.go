package inbound_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusehttp/inbound"
)

// trickle sends a POST /upload that declares n body bytes on conn and
// sends them one every gap, until the server answers; it returns the
// status of the answer.
func trickle(t *testing.T, conn net.Conn, n int, gap time.Duration) int {
	t.Helper()
	defer conn.Close()
	codes := make(chan int, 1)
	go func() {
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			codes <- 0
			return
		}
		resp.Body.Close()
		codes <- resp.StatusCode
	}()
	_, err := fmt.Fprintf(conn, "POST /upload HTTP/1.1\r\nHost: svc\r\nContent-Length: %d\r\n\r\n", n)
	require.NoError(t, err)
	for range n {
		select {
		case code := <-codes:
			return code // answered before the whole body was sent
		case <-time.After(gap):
		}
		if _, err := conn.Write([]byte{'x'}); err != nil {
			break
		}
	}
	return <-codes
}

// upload is a handler that reads the whole body and works on it for work.
type upload struct {
	work         time.Duration
	calls, bytes atomic.Int64
}

func (u *upload) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u.calls.Add(1)
	b, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	u.bytes.Add(int64(len(b)))
	time.Sleep(u.work)
	w.WriteHeader(http.StatusOK)
}

func TestSlowClientsHoldNoSlot(t *testing.T) {
	// Four connections send one body byte every 500 ms to a four-slot
	// route; uploads from other clients, one every 250 ms, must be served
	// all along, and the route's breaker must stay closed.
	scenario := func(t *testing.T, cfg inbound.Config, bodyBytes int) (trickled []int, took []time.Duration, g *executor.Group, up *upload) {
		g = newGroup(t, executor.GroupConfig{Default: executor.Config{Slots: 4, InvocationTimeout: time.Second}})
		cfg.Group = g
		up = &upload{work: 100 * time.Millisecond}
		mux := http.NewServeMux()
		mux.Handle("POST /upload", inbound.Handler(up, cfg))
		dial := pipeServer(t, mux)
		client := pipeClient(t, dial)

		trickled, took = make([]int, 4), make([]time.Duration, 4)
		var wg sync.WaitGroup
		for i := range trickled {
			wg.Go(func() {
				// Staggered, so that the four bodies do not all arrive in
				// the same instant, when with an upload in flight five
				// requests would want four slots (one refused busy,
				// depending on which goroutine the bubble runs first).
				time.Sleep(time.Duration(i) * 150 * time.Millisecond)
				start := time.Now()
				trickled[i] = trickle(t, dial(), bodyBytes, 500*time.Millisecond)
				took[i] = time.Since(start)
			})
		}
		time.Sleep(time.Second) // the four are trickling
		var served, refused int
		for range 60 {
			resp, err := client.Post("http://svc/upload", "application/octet-stream", strings.NewReader(strings.Repeat("u", 1024)))
			require.NoError(t, err)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				served++
			} else {
				refused++
			}
			time.Sleep(250 * time.Millisecond)
		}
		assert.Equal(t, 60, served, "every upload from a client that sends its body is served (%d refused)", refused)
		wg.Wait()
		return trickled, took, g, up
	}
	t.Run("the trickled bodies are served once they have all arrived", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			trickled, took, g, up := scenario(t, inbound.Config{BodyLimit: 1 << 20}, 40)
			assert.Equal(t, []int{200, 200, 200, 200}, trickled)
			for _, d := range took {
				assert.GreaterOrEqual(t, d, 20*time.Second, "40 bytes, one every 500 ms")
			}
			st := stats(t, g, "POST /upload")
			assert.Equal(t, breaker.Closed, st.Breaker.State)
			assert.Equal(t, uint64(64), st.Successes)
			assert.Zero(t, st.Failures+st.Timeouts, "no failure or timeout is charged to the route")
			assert.Zero(t, st.Rejected.Busy+st.Rejected.Saturated+st.Rejected.Open)
			assert.Equal(t, int64(60*1024+4*40), up.bytes.Load(), "the handlers read every body in full")
		})
	})
	t.Run("a body not sent within BodyTimeout is answered 408 and never reaches the handler", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			trickled, took, g, up := scenario(t, inbound.Config{BodyLimit: 1 << 20, BodyTimeout: 5 * time.Second}, 40)
			assert.Equal(t, []int{408, 408, 408, 408}, trickled)
			for _, d := range took {
				assert.Equal(t, 5*time.Second, d.Truncate(time.Second), "answered at the BodyTimeout")
			}
			assert.Equal(t, int64(60), up.calls.Load(), "only the uploads reached the handler")
			st := stats(t, g, "POST /upload")
			assert.Equal(t, breaker.Closed, st.Breaker.State)
			assert.Equal(t, uint64(60), st.Successes)
			assert.Zero(t, st.Failures+st.Timeouts+st.Ignored)
		})
	})
}

// timeoutErr is a read error that is a timeout, as a deadline's is.
type timeoutErr struct{}

func (timeoutErr) Error() string   { return "read timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

type failingBody struct{ err error }

func (b failingBody) Read([]byte) (int, error) { return 0, b.err }

func TestBodyLimit(t *testing.T) {
	g := newGroup(t, executor.GroupConfig{Default: executor.Config{Slots: 2}})
	up := &upload{}
	h := inbound.Handler(up, inbound.Config{Group: g, Key: func(*http.Request) string { return "up" }, BodyLimit: 100})
	serve := func(body io.Reader, declared int64) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/up", body)
		req.ContentLength = declared
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	t.Run("a body within the limit reaches the handler whole", func(t *testing.T) {
		for _, declared := range []int64{100, -1} {
			rec := serve(strings.NewReader(strings.Repeat("b", 100)), declared)
			assert.Equal(t, http.StatusOK, rec.Code, "declared %d", declared)
		}
		assert.Equal(t, int64(200), up.bytes.Load())
	})
	for _, tc := range []struct {
		name     string
		body     io.Reader
		declared int64
		code     int
	}{
		{"a body declared over the limit is answered 413, unread", failingBody{io.ErrUnexpectedEOF}, 101, http.StatusRequestEntityTooLarge},
		{"a chunked body over the limit is answered 413", strings.NewReader(strings.Repeat("b", 101)), -1, http.StatusRequestEntityTooLarge},
		{"a body cut by http.MaxBytesReader is answered 413", http.MaxBytesReader(nil, io.NopCloser(strings.NewReader(strings.Repeat("b", 60))), 50), -1, http.StatusRequestEntityTooLarge},
		{"a body that times out is answered 408", failingBody{timeoutErr{}}, -1, http.StatusRequestTimeout},
		{"a body the client broke off is answered 400", failingBody{io.ErrUnexpectedEOF}, 50, http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := up.calls.Load()
			rec := serve(tc.body, tc.declared)
			assert.Equal(t, tc.code, rec.Code)
			assert.Equal(t, "close", rec.Header().Get("Connection"))
			assert.Equal(t, calls, up.calls.Load(), "the handler is not called")
			st := stats(t, g, "up")
			assert.Zero(t, st.Failures+st.Ignored+st.Rejected.Busy, "no slot was asked for")
		})
	}
	t.Run("a request without a body is served as without a limit", func(t *testing.T) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/up", nil))
		assert.Equal(t, http.StatusOK, rec.Code)
	})
}
