package fuseboxtest_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fuseboxtest"
	"github.com/fusebox-go/fusebox/fusehttp"
)

// fetch makes a GET of url with client and ctx, and returns the response
// with its body read, how long it took on the bubble's clock, and the
// error.
func fetch(ctx context.Context, client *http.Client, url string) (*http.Response, string, time.Duration, error) {
	start := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, "", 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, "", time.Since(start), err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp, string(body), time.Since(start), err
}

func TestTransportServesTheFakeInMemory(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake(t, fuseboxtest.Phase{Do: fuseboxtest.Healthy(5 * time.Millisecond)})
		client := &http.Client{Transport: &fuseboxtest.Transport{Handler: f}}

		resp, body, took, err := fetch(t.Context(), client, "http://payments.test/charge")
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, "200 OK", resp.Status)
		assert.Equal(t, "ok\n", body)
		assert.Equal(t, 5*time.Millisecond, took, "the fake's latency, on the bubble's clock")

		require.NoError(t, f.Set(fuseboxtest.Fail(errDown)))
		resp, body, _, err = fetch(t.Context(), client, "http://payments.test/charge")
		require.NoError(t, err)
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
		assert.Equal(t, "payments down\n", body)
		assert.Equal(t, 2, f.Calls())
	})
}

func TestTransportShowsTheHandlerAServerRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var seen *http.Request
		var got string
		tr := &fuseboxtest.Transport{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			seen = r
			b, _ := io.ReadAll(r.Body)
			got = string(b)
			w.Header().Set("X-Answer", "42")
			w.WriteHeader(http.StatusCreated)
		})}
		closed := &closeCounter{Reader: strings.NewReader("an order")}
		req, err := http.NewRequest(http.MethodPost, "https://Shop.test:8443/orders?id=7", closed)
		require.NoError(t, err)
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		synctest.Wait() // the handler's goroutine has ended

		assert.Equal(t, http.StatusCreated, resp.StatusCode)
		assert.Equal(t, "42", resp.Header.Get("X-Answer"))
		assert.Same(t, req, resp.Request)
		assert.Equal(t, "an order", got)
		assert.Equal(t, "/orders?id=7", seen.RequestURI)
		assert.Equal(t, "/orders", seen.URL.Path)
		assert.Equal(t, "Shop.test:8443", seen.Host)
		assert.NotEmpty(t, seen.RemoteAddr)
		assert.NotNil(t, seen.TLS, "an https request looks like one served over TLS")
		assert.ErrorIs(t, seen.Context().Err(), context.Canceled, "the handler's context ends when it returns")
		assert.Equal(t, int32(1), closed.n.Load(), "the request body is closed once")
	})
}

// closeCounter is a request body that counts its Close calls.
type closeCounter struct {
	io.Reader
	n atomic.Int32
}

func (c *closeCounter) Close() error { c.n.Add(1); return nil }

// The whole outbound path in a bubble: a hung supplier behind fusehttp
// times out at the executor's invocation timeout, to the nanosecond, the
// handler sees its request cancelled, and the breaker opens.
func TestTransportHungCallEndsAtTheInvocationTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake(t, fuseboxtest.Phase{Do: fuseboxtest.Hang()})
		var rec fuseboxtest.Recorder
		g, err := executor.NewGroup(executor.GroupConfig{
			Default: executor.Config{Slots: 4, InvocationTimeout: 50 * time.Millisecond,
				Breaker: breaker.Config{ConsecutiveFailures: 3, ResetTimeout: time.Minute}},
			OnTransition: rec.Listen,
		})
		require.NoError(t, err)
		defer g.Close(context.Background())
		client := &http.Client{Transport: &fusehttp.Transport{Group: g, Base: &fuseboxtest.Transport{Handler: f}}}

		for i := range 3 {
			_, _, took, err := fetch(context.Background(), client, "http://payments.test/charge")
			require.ErrorIs(t, err, executor.ErrTimeout, "call %d", i)
			assert.Equal(t, 50*time.Millisecond, took, "call %d", i)
			synctest.Wait()
			assert.Equal(t, 0, f.Inside(), "call %d: the handler saw its request cancelled and returned", i)
		}
		open, err := rec.WaitForState(t.Context(), breaker.Open)
		require.NoError(t, err)
		assert.Equal(t, breaker.ConsecutiveFailures, open.Reason)
		_, _, took, err := fetch(context.Background(), client, "http://payments.test/charge")
		assert.ErrorIs(t, err, breaker.ErrOpen)
		assert.Zero(t, took, "an open breaker answers at once")
		assert.Equal(t, 3, f.Calls(), "the open breaker sent nothing")
	})
}

// A plain client's deadline ends a hung round trip with the context's
// error, and the handler's request context with it.
func TestTransportHonoursTheClientsDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake(t, fuseboxtest.Phase{Do: fuseboxtest.Hang()})
		client := &http.Client{Transport: &fuseboxtest.Transport{Handler: f}}
		ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
		defer cancel()
		_, _, took, err := fetch(ctx, client, "http://payments.test/")
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, time.Hour, took)
		synctest.Wait()
		assert.Equal(t, 0, f.Inside(), "the hung handler returned")
	})
}

// A streamed body arrives as the handler writes it; closing it early
// fails the handler's next write and cancels its request context, and the
// handler's goroutine ends (synctest.Test would report it otherwise).
func TestTransportStreamsTheBodyAndStopsTheHandlerOnClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var (
			writeErr  error
			cancelled bool
			returned  atomic.Bool
		)
		tr := &fuseboxtest.Transport{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer returned.Store(true)
			for i := 0; ; i++ {
				if _, writeErr = fmt.Fprintf(w, "chunk %d\n", i); writeErr != nil {
					cancelled = r.Context().Err() != nil
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
		})}
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://feed.test/", nil)
		require.NoError(t, err)
		start := time.Now()
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		assert.Equal(t, "text/plain; charset=utf-8", resp.Header.Get("Content-Type"), "sniffed, as by net/http")
		buf := make([]byte, len("chunk 0\n"))
		for i := range 3 {
			_, err := io.ReadFull(resp.Body, buf)
			require.NoError(t, err)
			assert.Equal(t, fmt.Sprintf("chunk %d\n", i), string(buf))
			assert.Equal(t, time.Duration(i)*10*time.Millisecond, time.Since(start), "chunk %d arrives as it is written", i)
		}
		require.NoError(t, resp.Body.Close())
		time.Sleep(10 * time.Millisecond) // the handler's next write
		synctest.Wait()
		assert.True(t, returned.Load(), "the handler returned")
		assert.ErrorContains(t, writeErr, "closed the response body", "the write after the close fails")
		assert.True(t, cancelled, "the handler's request context ends with the body")
		_, err = resp.Body.Read(buf)
		assert.Error(t, err, "a closed body reads no more")
	})
}

// A client that gives up while reading the body gets its context's error
// from Read, and the handler its cancelled context.
func TestTransportBodyEndsWithTheClientsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &fuseboxtest.Transport{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintln(w, "head")
			<-r.Context().Done()
		})}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://feed.test/", nil)
		require.NoError(t, err)
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		assert.Equal(t, "head\n", string(body))
		assert.ErrorIs(t, err, context.DeadlineExceeded)
	})
}

// A handler blocked writing to a client that stopped reading is released
// when the client's context ends.
func TestTransportReleasesAWriterWhenTheClientGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var writeErr error
		tr := &fuseboxtest.Transport{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			for writeErr == nil {
				_, writeErr = w.Write(make([]byte, 1024)) // ignores its context
			}
		})}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://feed.test/", nil)
		require.NoError(t, err)
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		time.Sleep(2 * time.Second) // the client never reads
		synctest.Wait()
		assert.ErrorIs(t, writeErr, context.DeadlineExceeded)
	})
}

func TestTransportHandlerPanics(t *testing.T) {
	t.Run("before it responds, the round trip fails", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			tr := &fuseboxtest.Transport{Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
				panic("boom")
			})}
			req, err := http.NewRequest(http.MethodGet, "http://payments.test/", nil)
			require.NoError(t, err)
			resp, err := tr.RoundTrip(req)
			assert.Nil(t, resp)
			var pe *breaker.PanicError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, "boom", pe.Value)
			assert.Contains(t, string(pe.Stack), "transport_test.go", "the stack shows the handler")
		})
	})
	t.Run("after it responds, the body's read fails", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			tr := &fuseboxtest.Transport{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				fmt.Fprintln(w, "half")
				panic(http.ErrAbortHandler)
			})}
			req, err := http.NewRequest(http.MethodGet, "http://payments.test/", nil)
			require.NoError(t, err)
			resp, err := tr.RoundTrip(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			assert.Equal(t, "half\n", string(body))
			assert.ErrorIs(t, err, http.ErrAbortHandler, "the panic value, through *breaker.PanicError")
		})
	})
	t.Run("behind fusehttp, it is a failure of the supplier", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			g, err := executor.NewGroup(executor.GroupConfig{Default: executor.Config{
				Breaker: breaker.Config{ConsecutiveFailures: 1, ResetTimeout: time.Minute}}})
			require.NoError(t, err)
			defer g.Close(context.Background())
			client := &http.Client{Transport: &fusehttp.Transport{Group: g, Base: &fuseboxtest.Transport{
				Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") })}}}
			_, _, _, err = fetch(t.Context(), client, "http://payments.test/")
			var pe *breaker.PanicError
			require.ErrorAs(t, err, &pe)
			ex, err := g.Executor("payments.test:80")
			require.NoError(t, err)
			assert.Equal(t, breaker.Open, ex.Stats().Breaker.State)
		})
	})
	t.Run("a Goexit fails the round trip too", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			tr := &fuseboxtest.Transport{Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
				runtime.Goexit()
			})}
			req, err := http.NewRequest(http.MethodGet, "http://payments.test/", nil)
			require.NoError(t, err)
			_, err = tr.RoundTrip(req)
			assert.ErrorContains(t, err, "runtime.Goexit")
		})
	})
}

func TestTransportMisuse(t *testing.T) {
	req := func() *http.Request {
		r, err := http.NewRequest(http.MethodGet, "http://payments.test/", nil)
		require.NoError(t, err)
		return r
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	noURL := req()
	noURL.URL = nil
	tests := []struct {
		name string
		tr   *fuseboxtest.Transport
		req  *http.Request
		want string
	}{
		{"a nil transport", nil, req(), "nil *Transport"},
		{"a transport without a handler", &fuseboxtest.Transport{}, req(), "Transport.Handler is nil"},
		{"a nil request", &fuseboxtest.Transport{Handler: http.NotFoundHandler()}, nil, "nil *http.Request"},
		{"a request without a URL", &fuseboxtest.Transport{Handler: http.NotFoundHandler()}, noURL, "nil URL"},
		{"a request whose context has ended", &fuseboxtest.Transport{Handler: http.NotFoundHandler()}, req().WithContext(cancelled), "context canceled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := tt.tr.RoundTrip(tt.req)
			assert.Nil(t, resp)
			assert.ErrorContains(t, err, tt.want)
		})
	}
	t.Run("an invalid status is the handler's panic", func(t *testing.T) {
		tr := &fuseboxtest.Transport{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(42)
		})}
		_, err := tr.RoundTrip(req())
		var pe *breaker.PanicError
		require.ErrorAs(t, err, &pe)
		assert.Contains(t, pe.Error(), "invalid WriteHeader code 42")
	})
}

func TestTransportBodylessResponses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var headWrite, noContentWrite error
		tr := &fuseboxtest.Transport{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodHead {
				_, headWrite = io.WriteString(w, "not sent")
				return
			}
			w.WriteHeader(http.StatusNoContent)
			_, noContentWrite = io.WriteString(w, "not allowed")
		})}
		client := &http.Client{Transport: tr}
		resp, err := client.Head("http://payments.test/")
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, http.NoBody, resp.Body)
		resp, body, _, err := fetch(t.Context(), client, "http://payments.test/")
		require.NoError(t, err)
		assert.Equal(t, http.StatusNoContent, resp.StatusCode)
		assert.Empty(t, body)
		synctest.Wait()
		assert.NoError(t, headWrite, "a HEAD's body is discarded")
		assert.True(t, errors.Is(noContentWrite, http.ErrBodyNotAllowed), "got %v, want ErrBodyNotAllowed", noContentWrite)
	})
}
