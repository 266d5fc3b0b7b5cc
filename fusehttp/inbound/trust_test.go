package inbound_test

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusehttp/inbound"
	"github.com/fusebox-go/fusebox/priority"
)

// ownNetwork trusts the peers of 10.0.0.0/8, the service's own network.
var ownNetwork = inbound.PeerIn(netip.MustParsePrefix("10.0.0.0/8"))

func TestTrustedPriority(t *testing.T) {
	t.Run("an untrusted client's critical header is ignored: the critical reserve stays for a trusted caller", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			g := newGroup(t, executor.GroupConfig{Default: executor.Config{Slots: 10, CriticalShare: 0.2}})
			slow := newGated()
			h := inbound.TrustedPriority("", ownNetwork)(
				inbound.Handler(slow, inbound.Config{Group: g, Key: func(*http.Request) string { return "api" }}))
			send := func(peer string) int {
				rec := httptest.NewRecorder()
				req := httptest.NewRequest(http.MethodGet, "/", nil)
				req.RemoteAddr = peer
				req.Header.Set(priority.Header, "critical")
				go h.ServeHTTP(rec, req)
				synctest.Wait()
				return rec.Code // 200 while still in the handler
			}
			var attacker []int
			for range 10 {
				attacker = append(attacker, send("203.0.113.9:40000"))
			}
			assert.Equal(t, []int{200, 200, 200, 200, 200, 200, 200, 200, 503, 503}, attacker,
				"admitted as default: 8 of 10 slots, the reserve of 2 kept")
			assert.Equal(t, 200, send("10.1.2.3:50000"), "a critical request from the service's own network finds the reserve")
			assert.Equal(t, 200, send("[::ffff:10.1.2.4]:50000"), "and so does one over IPv4-mapped IPv6")
			assert.Equal(t, uint64(2), stats(t, g, "api").RejectedByPriority[priority.Default])
			close(slow.gate)
			synctest.Wait()
		})
	})
	var seen atomic.Value
	record := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Store([2]string{priority.From(r.Context()).String(), r.Header.Get(priority.Header)})
	})
	var asked atomic.Int64
	trust := func(r *http.Request) bool { asked.Add(1); return ownNetwork(r) }
	mw := inbound.TrustedPriority("", trust)(record)
	serve := func(h http.Handler, peer string, values ...string) *httptest.ResponseRecorder {
		seen.Store([2]string{})
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.RemoteAddr = peer
		for _, v := range values {
			req.Header.Add(priority.Header, v)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	for _, tc := range []struct {
		name   string
		peer   string
		values []string
		code   int
		seen   [2]string // the priority next saw, and the header
	}{
		{"a trusted peer's priority is honoured", "10.0.0.1:1", []string{"critical"}, 200, [2]string{"critical", "critical"}},
		{"a trusted peer's sheddable too", "10.0.0.1:1", []string{"sheddable"}, 200, [2]string{"sheddable", "sheddable"}},
		{"an untrusted peer's header is removed and its priority left default", "192.0.2.1:1", []string{"critical"}, 200, [2]string{"default", ""}},
		{"an untrusted peer's invalid header is removed, not refused", "192.0.2.1:1", []string{"urgent!"}, 200, [2]string{"default", ""}},
		{"a trusted peer's unknown value is answered 400", "10.0.0.1:1", []string{"urgent"}, 400, [2]string{}},
		{"a trusted peer's header twice is answered 400", "10.0.0.1:1", []string{"critical", "sheddable"}, 400, [2]string{}},
		{"a request without the header is passed on as it is", "192.0.2.1:1", nil, 200, [2]string{"default", ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := serve(mw, tc.peer, tc.values...)
			assert.Equal(t, tc.code, rec.Code)
			assert.Equal(t, tc.seen, seen.Load())
			if tc.code == 400 {
				assert.Equal(t, "bad Fusebox-Priority header\n", rec.Body.String())
			}
		})
	}
	t.Run("trust runs only for requests that carry the header", func(t *testing.T) {
		before := asked.Load()
		serve(mw, "10.0.0.1:1")
		assert.Equal(t, before, asked.Load())
		serve(mw, "10.0.0.1:1", "critical")
		assert.Equal(t, before+1, asked.Load())
	})
	t.Run("a header of the service's own naming", func(t *testing.T) {
		h := inbound.TrustedPriority("x-request-priority", ownNetwork)(record)
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.RemoteAddr = "10.0.0.1:1"
		req.Header.Set("X-Request-Priority", "sheddable")
		req.Header.Set(priority.Header, "critical")
		h.ServeHTTP(httptest.NewRecorder(), req)
		assert.Equal(t, "sheddable", seen.Load().([2]string)[0])
	})
	t.Run("a panicking trust answers 500 without calling next", func(t *testing.T) {
		h := inbound.TrustedPriority("", func(*http.Request) bool { panic("trust store down") })(record)
		rec := serve(h, "10.0.0.1:1", "critical")
		assert.Equal(t, http.StatusInternalServerError, rec.Code)
		assert.Equal(t, "Internal Server Error\n", rec.Body.String())
		assert.Equal(t, [2]string{}, seen.Load(), "next not called")
	})
	t.Run("a nil trust answers 500", func(t *testing.T) {
		rec := serve(inbound.TrustedPriority("", nil)(record), "10.0.0.1:1")
		assert.Equal(t, http.StatusInternalServerError, rec.Code)
	})
}

func TestPeerIn(t *testing.T) {
	trust := inbound.PeerIn(netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8"), netip.Prefix{})
	for _, tc := range []struct {
		addr string
		want bool
	}{
		{"10.20.30.40:8080", true},
		{"[::ffff:10.20.30.40]:8080", true},
		{"[fd12::1]:8080", true},
		{"11.0.0.1:8080", false},
		{"[2001:db8::1]:8080", false},
		{"10.0.0.1", false},
		{"pipe", false},
		{"", false},
	} {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.RemoteAddr = tc.addr
		assert.Equal(t, tc.want, trust(req), "RemoteAddr %q", tc.addr)
	}
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.RemoteAddr = "0.0.0.0:1"
	require.False(t, inbound.PeerIn(netip.Prefix{})(req), "an invalid prefix matches nothing")
}
