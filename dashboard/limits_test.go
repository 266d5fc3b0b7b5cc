package dashboard_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/dashboard"
)

func TestAStreamEndsAfterItsLifetime(t *testing.T) {
	for _, tc := range []struct {
		name     string
		lifetime time.Duration
		want     time.Duration
	}{
		{"by default after 2 min", 0, 2 * time.Minute},
		{"after StreamLifetime", 30 * time.Second, 30 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHandler(t, dashboard.Options{StreamLifetime: tc.lifetime, MaxClients: 1})
				h.AddGroup(newGroup(t, "payments"))
				w := newSSEWriter()
				done, cancel := stream(h, w)
				defer cancel()
				require.Equal(t, http.StatusOK, <-w.code)
				start := time.Now()
				select {
				case <-done:
				case <-time.After(10 * time.Minute): // 600 events: w holds 1000
					t.Fatal("the stream still runs after 10 min")
				}
				assert.Equal(t, tc.want, time.Since(start))
				var last event
				for len(w.events) > 0 {
					last = <-w.events
				}
				assert.Equal(t, "end", last.name, "the page is told to reconnect at once")
				assert.JSONEq(t, `{"reason":"lifetime"}`, last.data)
				again := newSSEWriter()
				_, cancelAgain := stream(h, again)
				defer cancelAgain()
				assert.Equal(t, http.StatusOK, <-again.code, "its place is free again")
			})
		})
	}
}

func TestABusyAddressGivesWayToANewOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHandler(t, dashboard.Options{}) // 8 places, 4 per address
		type page struct {
			w      *sseWriter
			done   <-chan struct{}
			cancel func()
		}
		open := func(addr string) page {
			w := newSSEWriter()
			done, cancel := streamFrom(h, w, addr)
			t.Cleanup(cancel)
			return page{w, done, cancel}
		}
		ended := func(p page) bool {
			synctest.Wait()
			select {
			case <-p.done:
				return true
			default:
				return false
			}
		}
		var a, b []page
		for i := range 4 { // two scripts take every place
			a = append(a, open(fmt.Sprintf("192.0.2.1:%d", 4000+i)))
			require.Equal(t, http.StatusOK, <-a[i].w.code)
			time.Sleep(time.Millisecond)
			b = append(b, open(fmt.Sprintf("192.0.2.2:%d", 4000+i)))
			require.Equal(t, http.StatusOK, <-b[i].w.code)
			time.Sleep(time.Millisecond)
		}

		op := open("198.51.100.7:5000")
		require.Equal(t, http.StatusOK, <-op.w.code, "an operator still gets a place")
		assert.True(t, ended(a[0]), "the oldest stream of a busiest address gave way")
		for _, p := range append(a[1:], b...) {
			assert.False(t, ended(p))
		}

		// a holds 3 and b 4: a's page coming back would take one of b's
		// places only to have b take it back; it waits instead.
		r := httptest.NewRequest(http.MethodGet, "/api/events", nil)
		r.RemoteAddr = "192.0.2.1:4009"
		rw := httptest.NewRecorder()
		h.ServeHTTP(rw, r)
		assert.Equal(t, http.StatusServiceUnavailable, rw.Code)
		assert.Contains(t, rw.Body.String(), "MaxClients")
		assert.False(t, ended(op), "the operator keeps its place")

		op2 := open("198.51.100.8:5000")
		require.Equal(t, http.StatusOK, <-op2.w.code, "a second operator too")
		assert.True(t, ended(b[0]), "b's oldest gave way: b held the most")
		assert.False(t, ended(op))
	})
}

// With AllowedHosts set, a request must name the dashboard by address, as
// localhost or as an allowed name: a page of another site that rebinds its
// own domain to the listener's address cannot read the suppliers.
func TestAllowedHosts(t *testing.T) {
	h := newHandler(t, dashboard.Options{AllowedHosts: []string{"admin.internal"}, AllowControl: true, MaxClients: 1})
	h.AddGroup(newGroup(t, "payments"))
	paths := []string{"/", "/app.js", "/api/snapshot", "/api/fleet?supplier=payments"}
	for _, host := range []string{"rebound.evil.example", "rebound.evil.example:9090", "admin.internal.evil.example", ""} {
		for _, path := range paths {
			w := do(h, http.MethodGet, path, "", map[string]string{"Host": host})
			assert.Equal(t, http.StatusMisdirectedRequest, w.Code, "%q %s", host, path)
			assert.NotContains(t, w.Body.String(), "payments", "%q %s", host, path)
		}
		ctx, cancel := context.WithCancel(context.Background())
		r := httptest.NewRequest(http.MethodGet, "/api/events", nil).WithContext(ctx)
		r.Host = host
		sw := newSSEWriter()
		done := make(chan struct{})
		go func() { defer close(done); h.ServeHTTP(sw, r) }()
		assert.Equal(t, http.StatusMisdirectedRequest, <-sw.code, "%q events", host)
		cancel()
		<-done
		w := do(h, http.MethodPost, "/api/control", `{"supplier":"payments","action":"trip"}`, with(controlHeaders, "Host", host))
		assert.Equal(t, http.StatusMisdirectedRequest, w.Code, "%q control", host)
	}
	for _, host := range []string{"admin.internal", "ADMIN.internal:9090", "127.0.0.1:9090", "[::1]:9090", "localhost:9090"} {
		w := do(h, http.MethodGet, "/api/snapshot", "", map[string]string{"Host": host})
		assert.Equal(t, http.StatusOK, w.Code, host)
		assert.Contains(t, w.Body.String(), `"payments"`, host)
	}
	w := do(h, http.MethodPost, "/api/control", `{"supplier":"payments","action":"reset"}`, with(controlHeaders, "Host", "admin.internal"))
	assert.Equal(t, http.StatusOK, w.Code, "an allowed name may send controls: %s", w.Body.String())

	plain := newHandler(t, dashboard.Options{})
	w = do(plain, http.MethodGet, "/api/snapshot", "", map[string]string{"Host": "rebound.evil.example"})
	assert.Equal(t, http.StatusOK, w.Code, "without AllowedHosts any Host is served")
}

// pipeListener is a net.Listener of in-memory connections (net.Pipe),
// which have no buffers: a client that does not read blocks the server's
// next write at once, as a socket whose buffers have filled does. It runs
// inside a synctest bubble, where their deadlines follow the fake clock.
type pipeListener struct {
	conns chan net.Conn
	once  sync.Once
	done  chan struct{}
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error { l.once.Do(func() { close(l.done) }); return nil }

func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9090} }

// dial connects a client.
func (l *pipeListener) dial() net.Conn {
	client, server := net.Pipe()
	l.conns <- server
	return client
}

// A client that stops reading blocks the stream's write; its place is free
// again when that write's deadline passes, through a real http.Server
// and its ResponseController.
func TestANonReadingClientsPlaceIsFreedWithinWriteTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHandler(t, dashboard.Options{MaxClients: 1, WriteTimeout: 5 * time.Second})
		h.AddGroup(newGroup(t, "payments"))
		ln := newPipeListener()
		srv := &http.Server{Handler: h}
		served := make(chan error, 1)
		go func() { served <- srv.Serve(ln) }()
		defer func() {
			require.NoError(t, srv.Close())
			require.ErrorIs(t, <-served, http.ErrServerClosed)
		}()

		// A reader: it reads the header and the first event, then stops.
		c := ln.dial()
		defer c.Close()
		_, err := fmt.Fprintf(c, "GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:9090\r\n\r\n")
		require.NoError(t, err)
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		line, err := bufio.NewReader(resp.Body).ReadString('\n')
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(line, "retry: "), line)
		start := time.Now()

		// The next event, a second later, cannot be written: the place is
		// held until that write's deadline, and not a moment longer.
		taken := func() bool {
			w := newSSEWriter()
			_, cancel := stream(h, w)
			defer cancel()
			return <-w.code == http.StatusServiceUnavailable
		}
		time.Sleep(time.Second + 5*time.Second - time.Millisecond)
		assert.True(t, taken(), "held until the write's deadline")
		time.Sleep(time.Millisecond)
		synctest.Wait()
		assert.Equal(t, 6*time.Second, time.Since(start))
		assert.False(t, taken(), "free once the write's deadline passed")
	})
}

// Over TCP a client that does not read cannot be told from one that does
// until the kernel's buffers on both ends fill, which a small dashboard's
// events take minutes to do: StreamLifetime bounds the place it holds.
func TestANonReadingClientOverTCPGivesItsPlaceBackAfterTheLifetime(t *testing.T) {
	h := newHandler(t, dashboard.Options{MaxClients: 1, StreamLifetime: time.Second})
	h.AddGroup(newGroup(t, "payments"))
	srv := httptest.NewServer(h) // 127.0.0.1
	defer srv.Close()
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	_, err = fmt.Fprintf(c, "GET /api/events HTTP/1.1\r\nHost: %s\r\n\r\n", srv.Listener.Addr())
	require.NoError(t, err)
	// Its stream holds the place once the server has answered: read the
	// status line, and nothing after it.
	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
	status, err := bufio.NewReader(c).ReadString('\n')
	require.NoError(t, err)
	require.Contains(t, status, "200")
	start := time.Now()

	// Ask for a place until one is free: bounded in count and time.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tries := 0
	for ; ; tries++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/api/events", nil)
		require.NoError(t, err)
		resp, err := srv.Client().Do(req)
		require.NoError(t, err, "no place within 10 s (%d tries)", tries)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			break
		}
		require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
		select {
		case <-ctx.Done():
			t.Fatalf("the client that does not read still held its place after %v", time.Since(start))
		case <-time.After(50 * time.Millisecond):
		}
	}
	took := time.Since(start)
	assert.GreaterOrEqual(t, took, time.Second, "held for its lifetime")
	t.Logf("place free after %v", took)
}
