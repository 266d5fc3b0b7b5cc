package fusehttp_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusehttp"
	"github.com/fusebox-go/fusebox/fusehttp/inbound"
)

// A busy refusal of one route of a server (503 with Retry-After: 1, which
// by design trips nothing) does not open the client's breaker for the
// whole host: the client's next request, to an idle route, is served.
func TestABusyRouteDoesNotBlackOutItsHost(t *testing.T) {
	server := newGroup(t, executor.GroupConfig{Default: executor.Config{Slots: 1, InvocationTimeout: 5 * time.Second,
		Breaker: breaker.Config{ResetTimeout: 30 * time.Second}}})
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	mux := http.NewServeMux()
	mux.Handle("GET /search", inbound.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		entered <- struct{}{}
		<-release
	}), inbound.Config{Group: server}))
	mux.Handle("GET /home", inbound.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}), inbound.Config{Group: server}))
	url := service(t, mux)

	client := newGroup(t, executor.GroupConfig{Default: executor.Config{Slots: 10}})
	c := newClient(t, &fusehttp.Transport{Group: client})
	done := make(chan struct{})
	defer func() {
		close(release)
		<-done
	}()
	go func() {
		defer close(done)
		resp, err := c.Get(url + "/search")
		if err == nil {
			resp.Body.Close()
		}
	}()
	<-entered
	resp, err := c.Get(url + "/search")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "the busy route sheds")
	require.Equal(t, "1", resp.Header.Get("Retry-After"))

	resp, err = c.Get(url + "/home")
	require.NoError(t, err, "a busy refusal of one route must not black out the host")
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, breaker.Closed, stats(t, client, hostPort(t, url)).Breaker.State)
}
