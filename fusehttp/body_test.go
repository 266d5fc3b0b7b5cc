package fusehttp_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusehttp"
)

// roomy is a configuration whose timeouts never fire in a test that does
// not wait for them.
func roomy(workers int) executor.Config {
	return executor.Config{
		Slots:             workers,
		InvocationTimeout: 10 * time.Second,
		Breaker:           breaker.Config{ResetTimeout: 20 * time.Second},
	}
}

// The slot rule, over a real loopback connection.
func TestSlotIsHeldUntilTheBodyEnds(t *testing.T) {
	t.Run("closing the body, read or not, frees the slot before Close returns", func(t *testing.T) {
		up := newUpstream(t)
		g := newGroup(t, executor.GroupConfig{Default: roomy(1)})
		client := newClient(t, &fusehttp.Transport{Group: g})
		for i := range 20 {
			resp, err := client.Get(up.URL)
			require.NoError(t, err, "request %d: one slot, used one request after the other", i)
			assert.Equal(t, 1, stats(t, g, up.key(t)).InUse, "the unread body holds the slot")
			require.NoError(t, resp.Body.Close())
			assert.Equal(t, 0, stats(t, g, up.key(t)).InUse, "request %d: Close gave the slot back", i)
		}
		st := stats(t, g, up.key(t))
		assert.Equal(t, uint64(20), st.Successes)
		assert.Zero(t, st.Rejected.Saturated)
	})

	t.Run("reading the body to EOF frees the slot without Close", func(t *testing.T) {
		up := newUpstream(t)
		g := newGroup(t, executor.GroupConfig{Default: roomy(1)})
		client := newClient(t, &fusehttp.Transport{Group: g})
		first, err := client.Get(up.URL)
		require.NoError(t, err)
		b, err := io.ReadAll(first.Body)
		require.NoError(t, err)
		assert.Equal(t, "OK", string(b))
		assert.Equal(t, 0, stats(t, g, up.key(t)).InUse, "EOF gave the slot back")

		second, err := client.Get(up.URL)
		require.NoError(t, err, "the only slot is free for the next request")
		require.NoError(t, second.Body.Close())
		require.NoError(t, first.Body.Close(), "closing after EOF is harmless")
		assert.Equal(t, uint64(2), stats(t, g, up.key(t)).Successes)
	})

	t.Run("a body never closed holds the slot until the invocation timeout, then is cut off", func(t *testing.T) {
		// The server sends the headers and a first chunk, then streams
		// nothing more until the client goes away.
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "first")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}))
		t.Cleanup(srv.Close)
		g := newGroup(t, executor.GroupConfig{Default: quick(1)})
		client := newClient(t, &fusehttp.Transport{Group: g})
		key := hostPort(t, srv.URL)

		start := time.Now()
		resp, err := client.Get(srv.URL)
		require.NoError(t, err)
		defer resp.Body.Close()
		chunk := make([]byte, 5)
		_, err = io.ReadFull(resp.Body, chunk)
		require.NoError(t, err)
		assert.Equal(t, "first", string(chunk))
		assert.Equal(t, 1, stats(t, g, key).InUse)

		_, err = client.Get(srv.URL)
		require.True(t, errors.Is(err, executor.ErrBusy) || errors.Is(err, executor.ErrSaturated), "the open body still holds the only slot: %v", err)

		// The next read blocks until the deadline cuts the body off, and
		// returns once the slot is free.
		_, err = resp.Body.Read(chunk)
		assert.ErrorIs(t, err, executor.ErrTimeout, "the body is cut off at the deadline, as the round trip would be")
		assert.GreaterOrEqual(t, time.Since(start), quick(1).InvocationTimeout, "not before the invocation timeout")
		st := stats(t, g, key)
		assert.Zero(t, st.InUse)
		assert.Equal(t, uint64(1), st.Timeouts)
	})

	t.Run("a body the upstream cuts off is a failure, and frees the slot", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "100")
			io.WriteString(w, "only ten b")
			w.(http.Flusher).Flush()
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		}))
		t.Cleanup(srv.Close)
		g := newGroup(t, executor.GroupConfig{Default: roomy(1)})
		client := newClient(t, &fusehttp.Transport{Group: g})
		key := hostPort(t, srv.URL)

		resp, err := client.Get(srv.URL)
		require.NoError(t, err)
		defer resp.Body.Close()
		_, err = io.ReadAll(resp.Body)
		require.ErrorIs(t, err, io.ErrUnexpectedEOF)
		st := stats(t, g, key)
		assert.Equal(t, 0, st.InUse)
		assert.Equal(t, uint64(1), st.Failures, "a 200 whose body broke is not a success")
		assert.Zero(t, st.Successes)
	})

	t.Run("a response without a body frees the slot before RoundTrip returns", func(t *testing.T) {
		up := newUpstream(t)
		up.set(http.StatusNoContent, false)
		g := newGroup(t, executor.GroupConfig{Default: roomy(1)})
		tr := &fusehttp.Transport{Group: g}
		t.Cleanup(tr.CloseIdleConnections)
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			req, err := http.NewRequest(method, up.URL, nil)
			require.NoError(t, err)
			resp, err := tr.RoundTrip(req)
			require.NoError(t, err)
			assert.Equal(t, http.StatusNoContent, resp.StatusCode)
			assert.Equal(t, 0, stats(t, g, up.key(t)).InUse, "%s: never closed, yet free", method)
		}
	})
}

// Refused requests cost nothing: no connection, no read of their body.
func TestRejectionSendsNothing(t *testing.T) {
	post := func(t *testing.T, tr *fusehttp.Transport, url string) (*recordingBody, error) {
		t.Helper()
		body := newRecordingBody("order=42")
		req, err := http.NewRequest(http.MethodPost, url, body)
		require.NoError(t, err)
		resp, err := tr.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		return body, err
	}

	t.Run("an open breaker refuses at once and closes the request body unread", func(t *testing.T) {
		up := newUpstream(t)
		g := newGroup(t, executor.GroupConfig{Default: roomy(1)})
		tr := &fusehttp.Transport{Group: g}
		t.Cleanup(tr.CloseIdleConnections)
		ex, err := g.Executor(up.key(t))
		require.NoError(t, err)
		ex.Breaker().Trip(breaker.Manual)

		body, err := post(t, tr, up.URL)
		require.ErrorIs(t, err, breaker.ErrOpen)
		var rej *executor.RejectedError
		require.ErrorAs(t, err, &rej)
		assert.Equal(t, executor.RejectedOpen, rej.Reason)
		assert.Zero(t, body.reads.Load(), "the body was not read")
		assert.Equal(t, int64(1), body.closes.Load(), "RoundTrip closes the body, as its contract says")
		assert.Zero(t, up.hits.Load(), "nothing reached the server")
	})

	t.Run("a saturated host refuses at once and closes the request body unread", func(t *testing.T) {
		up := newUpstream(t)
		up.set(http.StatusOK, true)
		g := newGroup(t, executor.GroupConfig{Default: quick(1)})
		tr := &fusehttp.Transport{Group: g}
		t.Cleanup(tr.CloseIdleConnections)
		first, err := http.NewRequest(http.MethodPost, up.URL, newRecordingBody("order=41"))
		require.NoError(t, err)
		hung := make(chan error, 1)
		go func() {
			_, err := tr.RoundTrip(first)
			hung <- err
		}()
		up.awaitArrivals(t, 1)

		body, err := post(t, tr, up.URL)
		require.True(t, errors.Is(err, executor.ErrBusy) || errors.Is(err, executor.ErrSaturated), "got %v", err)
		assert.Zero(t, body.reads.Load())
		assert.Equal(t, int64(1), body.closes.Load())
		assert.Equal(t, int64(1), up.hits.Load(), "only the hung request reached the server")
		require.ErrorIs(t, <-hung, executor.ErrTimeout)
	})

	t.Run("a closed group refuses with ErrClosed", func(t *testing.T) {
		up := newUpstream(t)
		g, err := executor.NewGroup(executor.GroupConfig{})
		require.NoError(t, err)
		require.NoError(t, g.Close(t.Context()))
		body, err := post(t, &fusehttp.Transport{Group: g}, up.URL)
		require.ErrorIs(t, err, executor.ErrClosed)
		assert.Zero(t, body.reads.Load())
		assert.Equal(t, int64(1), body.closes.Load())
		assert.Zero(t, up.hits.Load())
	})

	t.Run("a Transport without a Group is an error, not a panic", func(t *testing.T) {
		body, err := post(t, &fusehttp.Transport{}, "http://127.0.0.1:1/")
		require.ErrorContains(t, err, "Group is nil")
		assert.Equal(t, int64(1), body.closes.Load())
	})
}
