package fusehttp_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fuseboxtest"
	"github.com/fusebox-go/fusebox/fusehttp"
)

// The story of the package: one host hangs, trips its own breaker the
// moment its slots run out, fails fast while another host keeps working,
// and closes again once it has recovered.
func TestHangingHostTripsItsOwnBreaker(t *testing.T) {
	slow, fine := newUpstream(t), newUpstream(t)
	rec := &fuseboxtest.Recorder{}
	g := newGroup(t, executor.GroupConfig{
		Default: quick(2),
		// The healthy host gets room to spare on a loaded machine.
		Suppliers: map[string]executor.Config{fine.key(t): {
			InvocationTimeout: 10 * time.Second,
			Breaker:           breaker.Config{ResetTimeout: 20 * time.Second},
		}},
		OnTransition: rec.Listen,
	})
	client := newClient(t, &fusehttp.Transport{Group: g})
	slow.set(http.StatusOK, true)

	// Two requests take both of the slow host's slots and hang.
	hung := make(chan error, 2)
	for range 2 {
		go func() {
			resp, err := client.Get(slow.URL)
			if err == nil {
				resp.Body.Close()
			}
			hung <- err
		}()
	}
	slow.awaitArrivals(t, 2) // both requests reach the slow host

	// The next requests find no slot. While the hung ones are young (this
	// host has no latency history: younger than half its invocation timeout)
	// the bulkhead is only busy and each is refused alone; then it is
	// stuck, and the refusal trips the breaker in that call.
	var rej *executor.RejectedError
	var err error
	for deadline := time.Now().Add(wait); time.Now().Before(deadline); {
		_, _, err = get(t, client, slow.URL)
		require.True(t, errors.Is(err, executor.ErrBusy) || errors.Is(err, executor.ErrSaturated), "got %v", err)
		require.ErrorAs(t, err, &rej)
		if rej.Reason != executor.RejectedBusy {
			break
		}
	}
	assert.Equal(t, executor.RejectedSaturated, rej.Reason)
	assert.Equal(t, slow.key(t), rej.Supplier, "the rejection names the host")
	assert.Equal(t, breaker.Open, stats(t, g, slow.key(t)).Breaker.State)

	// From now on the slow host fails fast, without a round trip...
	_, _, err = get(t, client, slow.URL)
	require.ErrorIs(t, err, breaker.ErrOpen)
	assert.Equal(t, int64(2), slow.hits.Load(), "rejected requests never reach the host")

	// ...while the other host answers, one request after the other (each
	// closes its body, which gives the slot back before the next starts).
	for i := range 5 {
		status, body, err := get(t, client, fine.URL)
		require.NoError(t, err, "request %d to the healthy host", i)
		assert.Equal(t, http.StatusOK, status)
		assert.Equal(t, "OK", body)
	}
	assert.Equal(t, breaker.Closed, stats(t, g, fine.key(t)).Breaker.State)

	// The hung requests end at the invocation timeout.
	for range 2 {
		err := <-hung
		require.ErrorIs(t, err, executor.ErrTimeout)
		require.ErrorIs(t, err, context.DeadlineExceeded)
	}

	// The host recovers: after the reset timeout the probe gets through
	// and closes the breaker.
	slow.set(http.StatusOK, false)
	require.Eventually(t, func() bool {
		status, _, err := get(t, client, slow.URL)
		return err == nil && status == http.StatusOK
	}, wait, 20*time.Millisecond,
		"the breaker lets a probe through only after its reset timeout, real time here: a loopback server cannot serve a synctest bubble")
	st := stats(t, g, slow.key(t))
	assert.Equal(t, breaker.Closed, st.Breaker.State)
	assert.Equal(t, uint64(2), st.Timeouts)
	assert.Equal(t, uint64(1), st.Rejected.Saturated)
	assert.GreaterOrEqual(t, st.Rejected.Open, uint64(1))
	assert.Equal(t, 0, st.InUse)
	assert.Equal(t, []string{
		"closed>open:saturation", "open>half-open:reset-timeout", "half-open>closed:probes-succeeded",
	}, transitions(rec.Events()), "the healthy host had no transition")
}

func TestStatusClassification(t *testing.T) {
	tests := []struct {
		status  int
		failure bool
	}{
		{http.StatusOK, false},
		{http.StatusNoContent, false},
		{http.StatusNotFound, false},
		{http.StatusConflict, false},
		{http.StatusTooManyRequests, true},
		{http.StatusInternalServerError, true},
		{http.StatusServiceUnavailable, true},
	}
	for _, tt := range tests {
		name := http.StatusText(tt.status) + " is a success"
		if tt.failure {
			name = http.StatusText(tt.status) + " is a failure that still reaches the caller as a response"
		}
		t.Run(name, func(t *testing.T) {
			up := newUpstream(t)
			g := newGroup(t, executor.GroupConfig{})
			client := newClient(t, &fusehttp.Transport{Group: g})
			up.set(tt.status, false)

			status, _, err := get(t, client, up.URL)
			require.NoError(t, err)
			assert.Equal(t, tt.status, status)
			st := stats(t, g, up.key(t))
			if tt.failure {
				assert.Equal(t, uint64(1), st.Failures, "got %d failures, want 1", st.Failures)
				assert.Zero(t, st.Successes)
			} else {
				assert.Equal(t, uint64(1), st.Successes, "got %d successes, want 1", st.Successes)
				assert.Zero(t, st.Failures)
			}
		})
	}
}

func TestFailingHostOpensAndRecovers(t *testing.T) {
	up := newUpstream(t)
	cfg := quick(4)
	cfg.Breaker.ConsecutiveFailures = 3
	g := newGroup(t, executor.GroupConfig{Default: cfg})
	client := newClient(t, &fusehttp.Transport{Group: g})

	up.set(http.StatusBadGateway, false)
	for range 3 {
		status, body, err := get(t, client, up.URL)
		require.NoError(t, err)
		assert.Equal(t, http.StatusBadGateway, status)
		assert.Equal(t, "Bad Gateway", body, "the caller reads the body of a failure")
	}
	_, _, err := get(t, client, up.URL)
	require.ErrorIs(t, err, breaker.ErrOpen)
	assert.Equal(t, int64(3), up.hits.Load())

	up.set(http.StatusOK, false)
	require.Eventually(t, func() bool {
		_, _, err := get(t, client, up.URL)
		return err == nil
	}, wait, 20*time.Millisecond,
		"the breaker lets a probe through only after its reset timeout, real time here: a loopback server cannot serve a synctest bubble")
	assert.Equal(t, breaker.Closed, stats(t, g, up.key(t)).Breaker.State)
}

func TestTransportErrorsAreFailures(t *testing.T) {
	up := newUpstream(t)
	g := newGroup(t, executor.GroupConfig{})
	client := newClient(t, &fusehttp.Transport{Group: g})
	up.Close() // connection refused from now on

	_, _, err := get(t, client, up.URL)
	require.Error(t, err)
	assert.NotErrorIs(t, err, breaker.ErrOpen)
	st := stats(t, g, up.key(t))
	assert.Equal(t, uint64(1), st.Failures)
	assert.Equal(t, 0, st.InUse)
}

func TestCustomClassify(t *testing.T) {
	up := newUpstream(t)
	errNotFound := errors.New("not found")
	g := newGroup(t, executor.GroupConfig{})
	client := newClient(t, &fusehttp.Transport{Group: g, Classify: func(resp *http.Response, err error) error {
		if err == nil && resp.StatusCode == http.StatusNotFound {
			return errNotFound // this upstream never answers 404 when healthy
		}
		return fusehttp.DefaultClassify(resp, err)
	}})
	up.set(http.StatusNotFound, false)

	status, _, err := get(t, client, up.URL)
	require.NoError(t, err, "the caller still gets the response")
	assert.Equal(t, http.StatusNotFound, status)
	assert.Equal(t, uint64(1), stats(t, g, up.key(t)).Failures)
}

func TestCallerCancellation(t *testing.T) {
	up := newUpstream(t)
	g := newGroup(t, executor.GroupConfig{Default: executor.Config{
		InvocationTimeout: 10 * time.Second, Breaker: breaker.Config{ResetTimeout: 20 * time.Second},
	}})
	client := newClient(t, &fusehttp.Transport{Group: g})
	up.set(http.StatusOK, true)

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, up.URL, nil)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	up.awaitArrivals(t, 1)
	start := time.Now()
	cancel()
	err = <-done
	require.ErrorIs(t, err, context.Canceled)
	assert.Less(t, time.Since(start), 5*time.Second, "the caller did not wait for the invocation timeout")

	st := stats(t, g, up.key(t))
	assert.Zero(t, st.InUse, "the slot was given back before RoundTrip returned")
	assert.Equal(t, uint64(1), st.Cancelled)
	assert.Zero(t, st.Failures, "the upstream did nothing wrong")
	assert.Equal(t, breaker.Closed, st.Breaker.State)
}

// failingBody is a request body whose own Read fails after its first
// chunk: an upload whose source broke on the caller's side.
type failingBody struct {
	reads atomic.Int64
	err   error
}

func (b *failingBody) Read(p []byte) (int, error) {
	if b.reads.Add(1) == 1 {
		return copy(p, "partial"), nil
	}
	return 0, b.err
}

func (b *failingBody) Close() error { return nil }

// A request whose own body fails to read failed on the caller's side: the
// caller gets the body's error, and the supplier's breaker ignores it, so
// that broken uploads never open a healthy host's breaker.
func TestARequestBodyThatFailsIsTheCallersError(t *testing.T) {
	errSource := errors.New("the upload's source broke")

	t.Run("over the network", func(t *testing.T) {
		up := newUpstream(t)
		cfg := roomy(4)
		cfg.Breaker.ConsecutiveFailures = 1 // one failure would open it
		g := newGroup(t, executor.GroupConfig{Default: cfg})
		client := newClient(t, &fusehttp.Transport{Group: g})
		for i := range 3 {
			req, err := http.NewRequest(http.MethodPost, up.URL, &failingBody{err: errSource})
			require.NoError(t, err)
			req.ContentLength = 100
			_, err = client.Do(req)
			require.ErrorIs(t, err, errSource, "request %d", i)
		}
		st := stats(t, g, up.key(t))
		assert.Zero(t, st.InUse)
		assert.Zero(t, st.Failures)
		assert.Equal(t, uint64(3), st.Ignored)
		assert.Equal(t, breaker.Closed, st.Breaker.State)
	})

	t.Run("read again through GetBody", func(t *testing.T) {
		cfg := oneSlot()
		cfg.Breaker.ConsecutiveFailures = 1
		tr, g := fakeTransport(t, cfg, func(r *http.Request) (*http.Response, error) {
			r.Body.Close()
			rc, err := r.GetBody() // as a base retrying on a new connection does
			if err != nil {
				return nil, err
			}
			defer rc.Close()
			if _, err := io.ReadAll(rc); err != nil {
				return nil, fmt.Errorf("writing the request: %w", err)
			}
			return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
		})
		// A body of a type net/http does not know: a stream, as an upload's is.
		req := newRequest(t, t.Context(), struct{ io.Reader }{strings.NewReader("order=42")})
		req.GetBody = func() (io.ReadCloser, error) { return &failingBody{err: errSource}, nil }
		_, err := tr.RoundTrip(req)
		require.ErrorIs(t, err, errSource)
		st := stats(t, g, "api")
		assert.Zero(t, st.Failures)
		assert.Equal(t, uint64(1), st.Ignored)
	})

	t.Run("an earlier attempt's body error does not make a later failure the caller's", func(t *testing.T) {
		tr, g := fakeTransport(t, oneSlot(), func(r *http.Request) (*http.Response, error) {
			if _, err := io.ReadAll(r.Body); err == nil {
				return nil, errors.New("want the first body to fail")
			}
			r.Body.Close()
			rc, err := r.GetBody() // the base tries again, and that body reads fine
			if err != nil {
				return nil, err
			}
			defer rc.Close()
			if _, err := io.ReadAll(rc); err != nil {
				return nil, err
			}
			// but the supplier cuts the connection, with the same sentinel
			return nil, fmt.Errorf("transport connection broken: %w", io.ErrUnexpectedEOF)
		})
		req := newRequest(t, t.Context(), &failingBody{err: io.ErrUnexpectedEOF})
		req.GetBody = func() (io.ReadCloser, error) {
			return io.NopCloser(struct{ io.Reader }{strings.NewReader("order=42")}), nil
		}
		_, err := tr.RoundTrip(req)
		require.ErrorIs(t, err, io.ErrUnexpectedEOF)
		st := stats(t, g, "api")
		assert.Equal(t, uint64(1), st.Failures, "the supplier's")
		assert.Zero(t, st.Ignored)
	})

	t.Run("in-memory and file bodies reach Base as they are", func(t *testing.T) {
		// net/http sends an in-memory body with the headers in one write,
		// and a file with sendfile, only when it sees their types.
		f, err := os.CreateTemp(t.TempDir(), "upload")
		require.NoError(t, err)
		t.Cleanup(func() { f.Close() })
		for name, body := range map[string]io.Reader{
			"strings.Reader": strings.NewReader("a"), "bytes.Reader": bytes.NewReader([]byte("a")),
			"bytes.Buffer": bytes.NewBufferString("a"), "os.File": f, "a file's LimitedReader": io.LimitReader(f, 1),
		} {
			var got io.ReadCloser
			tr, _ := fakeTransport(t, oneSlot(), func(r *http.Request) (*http.Response, error) {
				got = r.Body
				return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
			})
			req := newRequest(t, t.Context(), body)
			_, err := tr.RoundTrip(req)
			require.NoError(t, err)
			assert.Equal(t, req.Body, got, "%s: the caller's own body", name)
		}
	})

	t.Run("a supplier that fails while the body reads fine is a failure", func(t *testing.T) {
		errReset := errors.New("connection reset by peer")
		tr, g := fakeTransport(t, oneSlot(), func(r *http.Request) (*http.Response, error) {
			io.Copy(io.Discard, r.Body)
			return nil, errReset
		})
		_, err := tr.RoundTrip(newRequest(t, t.Context(), strings.NewReader("order=42")))
		require.ErrorIs(t, err, errReset)
		assert.Equal(t, uint64(1), stats(t, g, "api").Failures)
	})
}

func TestKeys(t *testing.T) {
	// suppliers sends a request to each URL through tr, over a base that
	// answers without a network, and returns the executors tr's group holds.
	suppliers := func(t *testing.T, tr *fusehttp.Transport, urls ...string) []string {
		t.Helper()
		tr.Base = fakeBase(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: r}, nil
		})
		for _, u := range urls {
			req, err := http.NewRequest(http.MethodGet, u, nil)
			require.NoError(t, err)
			resp, err := tr.RoundTrip(req)
			require.NoError(t, err)
			require.NoError(t, resp.Body.Close())
		}
		return tr.Group.Names()
	}
	tests := []struct {
		url, hostPort string
	}{
		{"http://example.com/a", "example.com:80"},
		{"https://Example.COM/a", "example.com:443"},
		{"https://example.com:443/b", "example.com:443"},
		{"http://127.0.0.1:8080/", "127.0.0.1:8080"},
		{"http://[::1]:9090/", "[::1]:9090"},
	}
	for _, tt := range tests {
		t.Run(tt.url+" is keyed "+tt.hostPort, func(t *testing.T) {
			tr := &fusehttp.Transport{Group: newGroup(t, executor.GroupConfig{})}
			assert.Equal(t, []string{tt.hostPort}, suppliers(t, tr, tt.url))
		})
	}

	t.Run("a Key that returns \"\" leaves the request to host and port", func(t *testing.T) {
		tr := &fusehttp.Transport{Group: newGroup(t, executor.GroupConfig{}), Key: func(r *http.Request) string {
			if strings.HasPrefix(r.URL.Path, "/inventory/") {
				return "inventory"
			}
			return ""
		}}
		assert.Equal(t, []string{"api.test:443", "inventory"},
			suppliers(t, tr, "https://api.test/inventory/42", "https://api.test/orders"))
	})

	t.Run("a Key of the host name alone groups the ports of a host", func(t *testing.T) {
		tr := &fusehttp.Transport{Group: newGroup(t, executor.GroupConfig{}),
			Key: func(r *http.Request) string { return strings.ToLower(r.URL.Hostname()) }}
		assert.Equal(t, []string{"example.com"}, suppliers(t, tr, "http://Example.com:8080/", "https://example.com/"))
	})

	t.Run("a custom key picks the supplier's configuration", func(t *testing.T) {
		up := newUpstream(t)
		g := newGroup(t, executor.GroupConfig{Suppliers: map[string]executor.Config{"inventory": {Slots: 3}}})
		client := newClient(t, &fusehttp.Transport{Group: g, Key: func(*http.Request) string { return "inventory" }})
		_, _, err := get(t, client, up.URL)
		require.NoError(t, err)
		st := stats(t, g, "inventory")
		assert.Equal(t, 3, st.Slots)
		assert.Equal(t, uint64(1), st.Successes)
	})

	t.Run("a name mapped to \"\" is an error before anything is sent", func(t *testing.T) {
		up := newUpstream(t)
		g := newGroup(t, executor.GroupConfig{})
		client := newClient(t, &fusehttp.Transport{Group: g, Names: map[string]string{up.key(t): ""}})
		_, _, err := get(t, client, up.URL)
		require.ErrorContains(t, err, "an empty name")
		assert.Zero(t, up.hits.Load())
	})
}
