package inbound_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusehttp/inbound"
	"github.com/fusebox-go/fusebox/priority"
)

// gated is a handler that waits on its gate (or its request's end) before
// it answers, and counts the requests it was called for.
type gated struct {
	gate    chan struct{}
	calls   atomic.Int64
	entered chan struct{}
}

func newGated() *gated {
	return &gated{gate: make(chan struct{}), entered: make(chan struct{}, 100)}
}

func (g *gated) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.calls.Add(1)
	g.entered <- struct{}{}
	select {
	case <-g.gate:
	case <-r.Context().Done():
	}
	w.WriteHeader(http.StatusOK)
}

func (g *gated) awaitEntered(t *testing.T, n int) {
	t.Helper()
	for i := range n {
		select {
		case <-g.entered:
		case <-time.After(wait):
			t.Fatalf("only %d of %d requests reached the handler within %v", i, n, wait)
		}
	}
}

// wait bounds every wait for an event that must happen.
const wait = 10 * time.Second

func ok(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }

// service serves mux on loopback and returns its URL.
func service(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestHandlerBulkheadsEachRoute(t *testing.T) {
	t.Run("a slow route is shed with 503 and Retry-After while the others are served", func(t *testing.T) {
		g := newGroup(t, executor.GroupConfig{Default: executor.Config{Slots: 2}})
		cfg := inbound.Config{Group: g}
		slow := newGated()
		mux := http.NewServeMux()
		mux.Handle("GET /search", inbound.Handler(slow, cfg))
		mux.Handle("GET /home", inbound.Handler(http.HandlerFunc(ok), cfg))
		url := service(t, mux)
		client := &http.Client{}
		t.Cleanup(client.CloseIdleConnections)

		done := make(chan int, 2)
		for range 2 {
			go func() {
				code, _, err := get(t, client, url+"/search")
				assert.NoError(t, err)
				done <- code
			}()
		}
		slow.awaitEntered(t, 2)
		resp, err := client.Get(url + "/search")
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "the third search finds no slot")
		assert.Equal(t, "1", resp.Header.Get("Retry-After"), "busy slots: a short wait")
		assert.Equal(t, "Service Unavailable\n", string(body), "nothing of the route in the body")
		assert.Equal(t, int64(2), slow.calls.Load(), "a refused request never reaches the handler")
		for range 3 {
			code, _, err := get(t, client, url+"/home")
			require.NoError(t, err)
			assert.Equal(t, http.StatusOK, code, "home has slots of its own")
		}
		assert.Equal(t, 2, stats(t, g, "GET /search").InUse, "the slots are held while the handlers run")
		close(slow.gate)
		assert.Equal(t, http.StatusOK, <-done)
		assert.Equal(t, http.StatusOK, <-done)
		st := stats(t, g, "GET /search")
		assert.Equal(t, 0, st.InUse)
		assert.Equal(t, uint64(2), st.Successes)
		assert.Equal(t, uint64(1), st.Rejected.Busy)
		assert.Equal(t, uint64(3), stats(t, g, "GET /home").Successes)
	})
	t.Run("wrapping the mux keys by the pattern it would route to", func(t *testing.T) {
		g := newGroup(t, executor.GroupConfig{})
		mux := http.NewServeMux()
		mux.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(r.PathValue("id")))
		})
		url := service(t, inbound.Handler(mux, inbound.Config{Group: g}))
		code, body, err := get(t, http.DefaultClient, url+"/items/42")
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, code)
		assert.Equal(t, "42", body, "the mux routes the request as without Handler")
		code, _, err = get(t, http.DefaultClient, url+"/nowhere")
		require.NoError(t, err)
		assert.Equal(t, http.StatusNotFound, code, "no pattern: served without a slot")
		assert.Equal(t, []string{"GET /items/{id}"}, g.Names())
		assert.Equal(t, uint64(1), stats(t, g, "GET /items/{id}").Successes)
	})
	t.Run("without a Key, a request no mux routed is answered 500 and the fix is logged, unserved", func(t *testing.T) {
		g := newGroup(t, executor.GroupConfig{})
		logger, logs := newLogger()
		var called atomic.Int64
		mux := http.NewServeMux()
		mux.HandleFunc("GET /search", func(http.ResponseWriter, *http.Request) { called.Add(1) })
		for name, next := range map[string]http.Handler{
			"a mux behind a middleware":  http.StripPrefix("/api", mux),
			"a router that is not a mux": http.HandlerFunc(func(http.ResponseWriter, *http.Request) { called.Add(1) }),
		} {
			rec := httptest.NewRecorder()
			inbound.Handler(next, inbound.Config{Group: g, Logger: logger}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/search", nil))
			assert.Equal(t, http.StatusInternalServerError, rec.Code, name)
			assert.Equal(t, "Internal Server Error\n", rec.Body.String(), name)
		}
		assert.Equal(t, 2, strings.Count(logs.String(), "wrap the handlers registered on an http.ServeMux, or the mux itself, or set Config.Key"))
		assert.Zero(t, called.Load(), "next is not called")
		assert.Empty(t, g.Names())
	})
	t.Run("an open breaker sheds with the time to its probe", func(t *testing.T) {
		g := newGroup(t, executor.GroupConfig{Default: executor.Config{Breaker: breaker.Config{ResetTimeout: 30 * time.Second}}})
		h := inbound.Handler(http.HandlerFunc(ok), inbound.Config{Group: g, Key: func(*http.Request) string { return "export" }})
		url := service(t, h)
		ex, err := g.Executor("export")
		require.NoError(t, err)
		ex.Breaker().Trip(breaker.Manual)
		code, body, err := get(t, http.DefaultClient, url)
		require.NoError(t, err)
		assert.Equal(t, http.StatusServiceUnavailable, code)
		assert.NotContains(t, body, "export", "nothing of the route in the body")
		resp, err := http.Get(url)
		require.NoError(t, err)
		resp.Body.Close()
		secs, err := strconv.Atoi(resp.Header.Get("Retry-After"))
		require.NoError(t, err)
		assert.InDelta(t, 30, secs, 1, "seconds to the probe, rounded up")
	})
}

func TestHandlerLeaseRules(t *testing.T) {
	t.Run("a handler that outlives the route's timeout is counted overdue and keeps its slot", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			g := newGroup(t, executor.GroupConfig{Default: executor.Config{Slots: 1, InvocationTimeout: time.Second}})
			slow := newGated()
			h := inbound.Handler(slow, inbound.Config{Group: g, Key: func(*http.Request) string { return "report" }})
			go h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/report", nil))
			<-slow.entered
			time.Sleep(2 * time.Second)
			st := stats(t, g, "report")
			assert.Equal(t, 1, st.Overdue)
			assert.Equal(t, uint64(1), st.Timeouts)
			assert.Equal(t, 1, st.InUse, "the slot is held until the handler returns")
			close(slow.gate)
			synctest.Wait()
			st = stats(t, g, "report")
			assert.Equal(t, 0, st.InUse)
			assert.Equal(t, 0, st.Overdue)
		})
	})
	t.Run("the client's cancellation ends the handler's work and is ignored by the breaker", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			g := newGroup(t, executor.GroupConfig{})
			slow := newGated()
			h := inbound.Handler(slow, inbound.Config{Group: g, Key: func(*http.Request) string { return "r" }})
			ctx, cancel := context.WithCancel(t.Context())
			go h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequestWithContext(ctx, http.MethodGet, "/", nil))
			<-slow.entered
			cancel()
			synctest.Wait()
			st := stats(t, g, "r")
			assert.Equal(t, 0, st.InUse)
			assert.Equal(t, uint64(1), st.Ignored)
			assert.Zero(t, st.Failures)
		})
	})
	t.Run("a panicking handler is a failure and its panic goes on", func(t *testing.T) {
		g := newGroup(t, executor.GroupConfig{})
		h := inbound.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }),
			inbound.Config{Group: g, Key: func(*http.Request) string { return "p" }})
		assert.PanicsWithValue(t, "boom", func() { h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil)) })
		st := stats(t, g, "p")
		assert.Equal(t, uint64(1), st.Failures)
		assert.Equal(t, 0, st.InUse)
	})
	t.Run("a handler that calls runtime.Goexit is a failure, unless the client had gone", func(t *testing.T) {
		g := newGroup(t, executor.GroupConfig{})
		h := inbound.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { runtime.Goexit() }),
			inbound.Config{Group: g, Key: func(*http.Request) string { return "g" }})
		serve := func(r *http.Request) {
			done := make(chan struct{})
			go func() {
				defer close(done)
				h.ServeHTTP(httptest.NewRecorder(), r)
			}()
			<-done
		}
		serve(httptest.NewRequest(http.MethodGet, "/", nil))
		st := stats(t, g, "g")
		assert.Equal(t, uint64(1), st.Failures)
		assert.Zero(t, st.Successes)
		assert.Equal(t, 0, st.InUse)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		serve(httptest.NewRequestWithContext(ctx, http.MethodGet, "/", nil))
		st = stats(t, g, "g")
		assert.Equal(t, uint64(1), st.Ignored)
		assert.Equal(t, uint64(1), st.Failures)
	})
	t.Run("a panicking Key answers 500 without calling the handler, its panic logged, not sent", func(t *testing.T) {
		g := newGroup(t, executor.GroupConfig{})
		logger, logs := newLogger()
		called := false
		h := inbound.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { called = true }),
			inbound.Config{Group: g, Logger: logger, Key: func(*http.Request) string { panic("bad key: secret-tenant-42") }})
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		assert.Equal(t, http.StatusInternalServerError, rec.Code)
		assert.Equal(t, "Internal Server Error\n", rec.Body.String())
		assert.False(t, called)
		assert.Contains(t, logs.String(), "inbound.Config.Key panicked: bad key: secret-tenant-42")
		assert.Contains(t, logs.String(), "stack=", "with the stack of the panic")
	})
	t.Run("an invalid Config is logged naming the field, and every request answered 500", func(t *testing.T) {
		g := newGroup(t, executor.GroupConfig{})
		for _, tc := range []struct {
			cfg   inbound.Config
			field string
		}{
			{inbound.Config{}, "Config.Group is required"},
			{inbound.Config{Group: g, BodyLimit: -1}, "Config.BodyLimit is -1"},
			{inbound.Config{Group: g, BodyLimit: 1, BodyTimeout: -time.Second}, "Config.BodyTimeout is -1s"},
			{inbound.Config{Group: g, BodyTimeout: time.Second}, "Config.BodyTimeout is set without a Config.BodyLimit"},
		} {
			logger, logs := newLogger()
			tc.cfg.Logger = logger
			h := inbound.Handler(http.HandlerFunc(ok), tc.cfg)
			assert.Contains(t, logs.String(), tc.field, "logged when Handler is called")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
			assert.Equal(t, http.StatusInternalServerError, rec.Code, tc.field)
			assert.Equal(t, "Internal Server Error\n", rec.Body.String(), tc.field)
		}
		assert.Empty(t, g.Names(), "no request was admitted")
	})
	t.Run("a Strict group's unknown route is answered a plain 503; the names it lists are logged", func(t *testing.T) {
		g := newGroup(t, executor.GroupConfig{Strict: true, Suppliers: map[string]executor.Config{"GET /internal-admin-7": {}}})
		logger, logs := newLogger()
		mux := http.NewServeMux()
		mux.Handle("GET /public", inbound.Handler(http.HandlerFunc(ok), inbound.Config{Group: g, Logger: logger}))
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/public", nil))
		assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
		assert.Equal(t, "Service Unavailable\n", rec.Body.String())
		assert.Empty(t, rec.Header().Get("Retry-After"))
		assert.Contains(t, logs.String(), "GET /internal-admin-7", "the configuration the answer leaves out")
	})
	t.Run("Reject answers refused requests", func(t *testing.T) {
		g := newGroup(t, executor.GroupConfig{})
		ex, err := g.Executor("r")
		require.NoError(t, err)
		ex.Breaker().ForceOpen()
		var got error
		h := inbound.Handler(http.HandlerFunc(ok), inbound.Config{Group: g, Key: func(*http.Request) string { return "r" },
			Reject: func(w http.ResponseWriter, _ *http.Request, err error) {
				got = err
				w.WriteHeader(http.StatusTooManyRequests)
			}})
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		assert.Equal(t, http.StatusTooManyRequests, rec.Code)
		require.ErrorIs(t, got, breaker.ErrOpen)
	})
}

func TestHandlerPriorities(t *testing.T) {
	t.Run("sheddable requests are refused first, critical ones find the reserve", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			g := newGroup(t, executor.GroupConfig{Default: executor.Config{Slots: 10, CriticalShare: 0.2}})
			slow := newGated()
			// Every peer of this test may choose its priority.
			h := inbound.TrustedPriority("", func(*http.Request) bool { return true })(
				inbound.Handler(slow, inbound.Config{Group: g, Key: func(*http.Request) string { return "api" }}))
			codes := map[string][]int{}
			send := func(p string, n int) {
				for range n {
					rec := httptest.NewRecorder()
					req := httptest.NewRequest(http.MethodGet, "/", nil)
					req.Header.Set(priority.Header, p)
					go h.ServeHTTP(rec, req)
					synctest.Wait()
					codes[p] = append(codes[p], rec.Code)
				}
			}
			send("sheddable", 6)
			send("default", 6)
			send("critical", 2)
			assert.Equal(t, []int{200, 200, 200, 200, 503, 503}, codes["sheddable"], "200: still in the handler")
			assert.Equal(t, []int{200, 200, 200, 200, 503, 503}, codes["default"])
			assert.Equal(t, []int{200, 200}, codes["critical"])
			st := stats(t, g, "api")
			assert.Equal(t, uint64(2), st.RejectedByPriority[priority.Sheddable])
			assert.Equal(t, uint64(2), st.RejectedByPriority[priority.Default])
			close(slow.gate)
			synctest.Wait()
		})
	})
}
