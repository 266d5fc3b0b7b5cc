package fusehttp_test

import (
	"context"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusehttp"
	"github.com/fusebox-go/fusebox/future"
)

// slowBase answers every request after a second of (virtual) time, or
// never for the host "hung", until the request's context ends.
type slowBase struct{}

func (slowBase) RoundTrip(r *http.Request) (*http.Response, error) {
	wait := time.Second
	if r.URL.Hostname() == "hung" {
		wait = time.Hour
	}
	select {
	case <-time.After(wait):
		return &http.Response{StatusCode: http.StatusOK, ContentLength: -1, Body: io.NopCloser(strings.NewReader(r.URL.Path)), Request: r}, nil
	case <-r.Context().Done():
		return nil, r.Context().Err()
	}
}

func submit(t *testing.T, tr *fusehttp.Transport, url string) (*future.Future[*http.Response], error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	require.NoError(t, err)
	return tr.Submit(req)
}

func TestSubmitFetchesConcurrentlyOnTheHostsExecutor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGroup(t, executor.GroupConfig{Default: executor.Config{Slots: 2, InvocationTimeout: 2 * time.Second,
			Breaker: breaker.Config{ResetTimeout: 5 * time.Second}}})
		tr := &fusehttp.Transport{Group: g, Base: slowBase{}}
		start := time.Now()
		price, err := submit(t, tr, "http://shop/price")
		require.NoError(t, err)
		stock, err := submit(t, tr, "http://shop/stock")
		require.NoError(t, err)
		synctest.Wait()
		assert.Equal(t, 2, stats(t, g, "shop:80").InUse, "one slot each, on the host's executor")

		require.NoError(t, future.Wait(t.Context(), price, stock))
		assert.Equal(t, time.Second, time.Since(start), "the two ran at once")
		for i, f := range []*future.Future[*http.Response]{price, stock} {
			resp, err := f.Await(t.Context())
			require.NoError(t, err)
			assert.Equal(t, 2-i, stats(t, g, "shop:80").InUse, "a slot is held until its body is closed")
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, []string{"/price", "/stock"}[i], string(body))
		}
		st := stats(t, g, "shop:80")
		assert.Zero(t, st.InUse)
		assert.Equal(t, uint64(2), st.Successes)
	})
}

func TestSubmitRefusesAtOnceWithoutAFuture(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGroup(t, executor.GroupConfig{Default: executor.Config{Slots: 1, InvocationTimeout: 2 * time.Second,
			Breaker: breaker.Config{ResetTimeout: 5 * time.Second}}})
		tr := &fusehttp.Transport{Group: g, Base: slowBase{}}
		ex, err := g.Executor("shop:80")
		require.NoError(t, err)
		ex.Breaker().ForceOpen()
		f, err := submit(t, tr, "http://shop/price")
		require.ErrorIs(t, err, breaker.ErrOpen)
		assert.Nil(t, f)
	})
}

func TestSubmitOfAHungHostTimesOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGroup(t, executor.GroupConfig{Default: executor.Config{Slots: 1, InvocationTimeout: 2 * time.Second,
			Breaker: breaker.Config{ResetTimeout: 5 * time.Second}}})
		tr := &fusehttp.Transport{Group: g, Base: slowBase{}}
		start := time.Now()
		f, err := submit(t, tr, "http://hung/")
		require.NoError(t, err)
		_, err = f.Await(context.Background())
		require.ErrorIs(t, err, executor.ErrTimeout)
		assert.Equal(t, 2*time.Second, time.Since(start))
		synctest.Wait()
		assert.Zero(t, stats(t, g, "hung:80").InUse)
	})
}

func TestSubmitResolvesTheFutureOfABaseThatCallsGoexit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGroup(t, executor.GroupConfig{Default: executor.Config{Slots: 1, InvocationTimeout: 2 * time.Second,
			Breaker: breaker.Config{ResetTimeout: 5 * time.Second}}})
		tr := &fusehttp.Transport{Group: g, Base: goexitBase{}}
		f, err := submit(t, tr, "http://shop/")
		require.NoError(t, err)
		_, err = f.Await(t.Context())
		var pe *breaker.PanicError
		require.ErrorAs(t, err, &pe, "the future resolves")
		assert.Equal(t, breaker.ErrGoexit, pe.Value)
		synctest.Wait()
		assert.Zero(t, stats(t, g, "shop:80").InUse, "the slot is back")
	})
}

// goexitBase ends the goroutine of every round trip.
type goexitBase struct{}

func (goexitBase) RoundTrip(*http.Request) (*http.Response, error) { runtime.Goexit(); return nil, nil }
