package fusehttp_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusehttp"
)

// Issue 10.2: Transport.Classify and Transport.Key are user code; a panic
// in either is this request's error, never a crash or a stuck slot.
func TestAPanickingClassifyCountsAFailureAndStillDeliversTheResponse(t *testing.T) {
	up := newUpstream(t)
	g := newGroup(t, executor.GroupConfig{})
	client := newClient(t, &fusehttp.Transport{Group: g, Classify: func(*http.Response, error) error {
		panic("classify bug")
	}})

	status, body, err := get(t, client, up.URL)
	require.NoError(t, err, "the caller still gets the response")
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "OK", body)
	st := stats(t, g, up.key(t))
	assert.Zero(t, st.Busy, "closing the body gave the slot back")
	assert.Equal(t, uint64(1), st.Failures, "got %d failures, want the panic counted as one", st.Failures)
}

func TestAPanickingKeyFailsTheRequestWithoutSendingIt(t *testing.T) {
	up := newUpstream(t)
	g := newGroup(t, executor.GroupConfig{})
	client := newClient(t, &fusehttp.Transport{Group: g, Key: func(*http.Request) string { panic("key bug") }})

	_, _, err := get(t, client, up.URL)
	var pe *breaker.PanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "fusehttp.Transport.Key", pe.Callback)
	assert.Zero(t, up.hits.Load(), "nothing was sent")
}
