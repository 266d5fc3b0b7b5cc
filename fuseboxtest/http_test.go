package fuseboxtest_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fuseboxtest"
	"github.com/fusebox-go/fusebox/fusehttp"
)

// serve starts h on a real server on 127.0.0.1, stopped at the test's end.
func serve(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h) // listens on 127.0.0.1, a free port
	t.Cleanup(srv.Close)
	return srv
}

// get fetches url with client and returns the status and body, or the error.
func get(t *testing.T, client *http.Client, url string, limit time.Duration) (int, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body), nil
}

func TestFakeAsAnHTTPServer(t *testing.T) {
	f := newFake(t)
	srv := serve(t, f)
	client := srv.Client()

	code, body, err := get(t, client, srv.URL, 10*time.Second)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "ok\n", body)

	require.NoError(t, f.Set(fuseboxtest.Fail(errDown)))
	code, body, err = get(t, client, srv.URL, 10*time.Second)
	require.NoError(t, err)
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, "payments down\n", body)

	// The client gives up only once the hung request is inside the fake: a
	// deadline of its own could end the request before it reached the
	// server on a loaded machine, and the fake would count one call fewer.
	require.NoError(t, f.Set(fuseboxtest.Hang()))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	gaveUp := make(chan error, 1)
	go func() {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		if err == nil {
			var resp *http.Response
			if resp, err = client.Do(req); err == nil {
				resp.Body.Close()
			}
		}
		gaveUp <- err
	}()
	require.Eventually(t, func() bool { return f.Inside() == 1 }, 10*time.Second, time.Millisecond,
		"the hung request reaches the server")
	cancel()
	select {
	case err = <-gaveUp:
	case <-time.After(10 * time.Second):
		t.Fatal("the request to the hung server did not end when the client gave up")
	}
	assert.ErrorIs(t, err, context.Canceled, "the client gives up on a hung server")
	assert.Eventually(t, func() bool { return f.Inside() == 0 }, 10*time.Second, 5*time.Millisecond,
		"the server sees the client leave and ends the hung request")
	assert.Equal(t, 3, f.Calls())
}

func TestHandlerFrontsARealHandler(t *testing.T) {
	f := newFake(t, fuseboxtest.Phase{Do: fuseboxtest.Fail(errDown), Calls: 1}, fuseboxtest.Phase{})
	srv := serve(t, f.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "42 items")
	})))
	code, _, err := get(t, srv.Client(), srv.URL, 10*time.Second)
	require.NoError(t, err)
	assert.Equal(t, http.StatusServiceUnavailable, code)
	code, body, err := get(t, srv.Client(), srv.URL, 10*time.Second)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "42 items\n", body)
}

// A fake HTTP supplier behind fusehttp: while it hangs, its calls time out
// and the breaker opens; the recorder sees it.
func TestFakeHTTPSupplierBehindFusehttp(t *testing.T) {
	f := newFake(t, fuseboxtest.Phase{Do: fuseboxtest.Hang()})
	srv := serve(t, f)
	var rec fuseboxtest.Recorder
	g, err := executor.NewGroup(executor.GroupConfig{
		Default: executor.Config{Slots: 4, InvocationTimeout: 50 * time.Millisecond,
			Breaker: breaker.Config{ConsecutiveFailures: 2, ResetTimeout: time.Minute}},
		OnTransition: rec.Listen,
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close(context.Background()) })
	tr := &fusehttp.Transport{Group: g}
	t.Cleanup(tr.CloseIdleConnections)
	client := &http.Client{Transport: tr}
	for range 3 {
		_, _, _ = get(t, client, srv.URL, 10*time.Second)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e, err := rec.WaitForState(ctx, breaker.Open)
	require.NoError(t, err)
	assert.Equal(t, breaker.ConsecutiveFailures, e.Reason)
	_, _, err = get(t, client, srv.URL, 10*time.Second)
	assert.ErrorIs(t, err, breaker.ErrOpen)
	// At most the two calls before the trip reached the server (a request
	// the client gave up on may never have arrived); the open breaker sent
	// nothing more.
	assert.LessOrEqual(t, f.Calls(), 2)
}
