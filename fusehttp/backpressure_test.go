package fusehttp_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusehttp"
	"github.com/fusebox-go/fusebox/fusehttp/inbound"
)

// pushback is a base transport that answers every request with status and
// a Retry-After of after, without a network, and counts the requests.
type pushback struct {
	status int
	after  func() string
	sent   atomic.Int64
}

func (p *pushback) RoundTrip(req *http.Request) (*http.Response, error) {
	p.sent.Add(1)
	h := http.Header{}
	if a := p.after(); a != "" {
		h.Set("Retry-After", a)
	}
	return &http.Response{StatusCode: p.status, Header: h, Body: io.NopCloser(strings.NewReader("")),
		ContentLength: 0, Request: req}, nil
}

func TestTransportHonoursRetryAfter(t *testing.T) {
	cases := []struct {
		name     string
		status   int
		after    func() string
		max      time.Duration
		openFor  time.Duration // 0: the breaker stays closed
		attempts int           // requests sent of the three made right away
	}{
		{"a 503 with delay-seconds opens the breaker for that long", 503, fixed("5"), 0, 5 * time.Second, 1},
		{"a 429 with an HTTP date opens it until then", 429, func() string {
			return time.Now().Add(8 * time.Second).UTC().Format(http.TimeFormat)
		}, 0, 8 * time.Second, 1},
		{"a wait longer than MaxRetryAfter is capped", 503, fixed("3600"), 10 * time.Second, 10 * time.Second, 1},
		{"the default cap is a minute", 503, fixed("3600"), 0, time.Minute, 1},
		{"a negative MaxRetryAfter turns the rule off", 503, fixed("5"), -1, 0, 3},
		{"a 500 with Retry-After is no backpressure", 500, fixed("5"), 0, 0, 3},
		{"a Retry-After that is no wait is ignored", 503, fixed("soon"), 0, 0, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := &pushback{status: tc.status, after: tc.after}
				// Only the Retry-After rule may open the breaker here.
				g := newGroup(t, executor.GroupConfig{Default: executor.Config{Breaker: breaker.Config{ConsecutiveFailures: 100}}})
				client := &http.Client{Transport: &fusehttp.Transport{Group: g, Base: base, MaxRetryAfter: tc.max}}
				start := time.Now()
				for range 3 {
					resp, err := client.Get("http://supplier.test/")
					if err == nil {
						resp.Body.Close()
						assert.Equal(t, tc.status, resp.StatusCode, "the caller still gets the response")
					} else {
						require.ErrorIs(t, err, breaker.ErrOpen)
					}
				}
				assert.Equal(t, int64(tc.attempts), base.sent.Load(), "requests that reached the supplier")
				st := stats(t, g, "supplier.test:80").Breaker
				if tc.openFor == 0 {
					assert.Equal(t, breaker.Closed, st.State)
					return
				}
				assert.Equal(t, breaker.Open, st.State)
				assert.Equal(t, breaker.Remote, st.Reason, "the supplier's own word")
				assert.Equal(t, start.Add(tc.openFor), st.OpenUntil)
				time.Sleep(tc.openFor)
				base.status, base.after = http.StatusOK, fixed("")
				_, _, err := get(t, client, "http://supplier.test/")
				require.NoError(t, err, "the probe goes through once the wait is over")
				assert.Equal(t, int64(tc.attempts+1), base.sent.Load())
				assert.Equal(t, breaker.Closed, stats(t, g, "supplier.test:80").Breaker.State)
			})
		})
	}
}

func fixed(s string) func() string { return func() string { return s } }

// A service behind inbound.Handler sheds with Retry-After, and a client
// through fusehttp.Transport waits as asked: both ends over loopback.
func TestRetryAfterBothWays(t *testing.T) {
	server := newGroup(t, executor.GroupConfig{Default: executor.Config{Breaker: breaker.Config{ResetTimeout: 30 * time.Second}}})
	var served atomic.Int64
	h := inbound.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { served.Add(1) }),
		inbound.Config{Group: server, Key: func(*http.Request) string { return "search" }})
	url := service(t, h)
	ex, err := server.Executor("search")
	require.NoError(t, err)
	ex.Breaker().Trip(breaker.Manual) // the route's slots were stuck, say

	client := newGroup(t, executor.GroupConfig{})
	c := newClient(t, &fusehttp.Transport{Group: client})
	resp, err := c.Get(url)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	require.NotEmpty(t, resp.Header.Get("Retry-After"), "the service says when to come back")

	for range 5 {
		_, err = c.Get(url)
		require.ErrorIs(t, err, breaker.ErrOpen, "the client waits as asked, without sending")
	}
	st := stats(t, client, hostPort(t, url))
	assert.Equal(t, breaker.Remote, st.Breaker.Reason)
	assert.InDelta(t, 30, time.Until(st.Breaker.OpenUntil).Seconds(), 2, "open until the service's probe time")
	assert.Equal(t, uint64(1), ex.Stats().Rejected.Open, "the service saw one request only")
	assert.Zero(t, served.Load())
}

// service serves h on loopback and returns its URL.
func service(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}
