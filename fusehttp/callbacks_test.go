package fusehttp_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	// The call ends on its own goroutine once the body is closed.
	key := up.key(t)
	require.Eventually(t, func() bool { return stats(t, g, key).Busy == 0 }, wait, tick, "the slot is freed")
	st := stats(t, g, key)
	assert.Equal(t, uint64(1), st.Failures, "got %d failures, want the panic counted as one", st.Failures)
}

func TestAPanickingKeyFailsTheRequestWithoutSendingIt(t *testing.T) {
	up := newUpstream(t)
	g := newGroup(t, executor.GroupConfig{})
	client := newClient(t, &fusehttp.Transport{Group: g, Key: func(*http.Request) string { panic("key bug") }})

	_, _, err := get(t, client, up.URL)
	var pe *executor.PanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "fusehttp.Transport.Key", pe.Callback)
	assert.Zero(t, up.hits.Load(), "nothing was sent")
}
