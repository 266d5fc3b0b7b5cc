package fusehttp_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusehttp"
)

// withBody answers every request at once with a body to read.
type withBody struct{}

func (withBody) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, ContentLength: -1, Body: io.NopCloser(strings.NewReader("ok")), Request: r}, nil
}

// In shadow mode a request beyond the host's slots is sent all the same,
// outside the bulkhead: its open body holds no slot, and closing it frees
// nothing it does not hold.
func TestShadowModeSendsTheRequestsEnforceModeWouldRefuse(t *testing.T) {
	// A timeout out of reach: the first body holds its slot until the end,
	// and on a loaded machine a second could pass before the test gets there.
	g, err := executor.NewGroup(executor.GroupConfig{Default: executor.Config{Slots: 1, InvocationTimeout: time.Minute,
		Shadow: true, Stuck: executor.StuckConfig{TripOnAnySaturation: true}, Breaker: breaker.Config{ResetTimeout: 2 * time.Minute}}})
	require.NoError(t, err)
	defer g.Close(t.Context())
	client := &http.Client{Transport: &fusehttp.Transport{Group: g, Base: withBody{}}}
	first, err := client.Get("http://payments.example/")
	require.NoError(t, err, "takes the slot: its body is open")
	second, err := client.Get("http://payments.example/")
	require.NoError(t, err, "no slot left: sent outside the bulkhead")
	third, err := client.Get("http://payments.example/")
	require.NoError(t, err, "the shadow breaker is open: sent all the same")
	ex, ok := g.Lookup("payments.example:80")
	require.True(t, ok)
	st := ex.Stats()
	assert.Equal(t, 1, st.InUse)
	assert.Equal(t, breaker.Open, st.Breaker.State)
	assert.Equal(t, executor.Rejections{Saturated: 1, Open: 1}, st.Shadowed)
	assert.Equal(t, executor.Rejections{}, st.Rejected)
	for _, r := range []*http.Response{second, third, first} {
		require.NoError(t, r.Body.Close())
	}
	st = ex.Stats()
	assert.Zero(t, st.InUse, "the slot is free again")
	assert.Equal(t, uint64(3), st.Successes)
}
