package fusehttp_test

import (
	"context"
	"net/http"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

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
	assert.Zero(t, st.InUse, "closing the body gave the slot back")
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

// Transport.Base and Transport.Classify are user code too: one that ends
// its goroutine (runtime.Goexit, as t.FailNow does in a test's fake) never
// returns, yet the slot is given back, the exchange counted as a failure
// (a panic naming the callback), and the Goexit goes on.
func TestAGoexitInBaseOrClassifyGivesTheSlotBack(t *testing.T) {
	// roundTrip sends a request through tr on a goroutine of its own and
	// reports whether RoundTrip returned.
	roundTrip := func(t *testing.T, tr *fusehttp.Transport) (returned bool) {
		t.Helper()
		done := make(chan struct{})
		go func() {
			defer close(done)
			resp, err := tr.RoundTrip(newRequest(t, context.Background(), nil))
			if err == nil {
				resp.Body.Close()
			}
			returned = true
		}()
		<-done
		return returned
	}

	t.Run("Base", func(t *testing.T) {
		exit := true
		tr, g := fakeTransport(t, oneSlot(), func(*http.Request) (*http.Response, error) {
			if exit {
				runtime.Goexit()
			}
			return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
		})
		assert.False(t, roundTrip(t, tr), "the Goexit went on")
		st := stats(t, g, "api")
		assert.Zero(t, st.InUse, "the slot is given back")
		assert.Equal(t, uint64(1), st.Failures)
		assert.Equal(t, uint64(1), st.Panics)

		exit = false
		resp, err := tr.RoundTrip(newRequest(t, context.Background(), nil))
		require.NoError(t, err, "the only slot is free for the next request")
		require.NoError(t, resp.Body.Close())
	})

	t.Run("Classify", func(t *testing.T) {
		var bodies []*recordingBody
		tr, g := fakeTransport(t, oneSlot(), func(*http.Request) (*http.Response, error) {
			b := newRecordingBody("ok")
			bodies = append(bodies, b)
			return &http.Response{StatusCode: http.StatusOK, ContentLength: 2, Body: b}, nil
		})
		tr.Classify = func(*http.Response, error) error { runtime.Goexit(); return nil }
		assert.False(t, roundTrip(t, tr), "the Goexit went on")
		st := stats(t, g, "api")
		assert.Zero(t, st.InUse, "the slot is given back")
		assert.Equal(t, uint64(1), st.Failures)
		assert.Equal(t, uint64(1), st.Panics)
		assert.Equal(t, int64(1), bodies[0].closes.Load(), "the response nobody will get is closed")

		tr.Classify = nil
		resp, err := tr.RoundTrip(newRequest(t, context.Background(), nil))
		require.NoError(t, err, "the only slot is free for the next request")
		require.NoError(t, resp.Body.Close())
	})
}

// A Base may answer with a nil Body, as http.Client allows: the caller gets
// http.NoBody, as http.Client makes it, and a late answer of a Base that
// ignored its context is closed without a crash. A Base that returns
// neither a response nor an error has failed.
func TestABaseAnsweringWithoutABody(t *testing.T) {
	t.Run("a nil Body is http.NoBody", func(t *testing.T) {
		tr, g := fakeTransport(t, oneSlot(), func(*http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: http.StatusOK}, nil
		})
		resp, err := tr.RoundTrip(newRequest(t, context.Background(), nil))
		require.NoError(t, err)
		assert.Equal(t, http.NoBody, resp.Body)
		st := stats(t, g, "api")
		assert.Zero(t, st.InUse, "no body to wait for")
		assert.Equal(t, uint64(1), st.Successes)
	})

	t.Run("a late answer with a nil Body is a timeout", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			tr, g := fakeTransport(t, oneSlot(), func(*http.Request) (*http.Response, error) {
				time.Sleep(2 * time.Second) // past the deadline, ignoring the request's context
				return &http.Response{StatusCode: http.StatusOK}, nil
			})
			_, err := tr.RoundTrip(newRequest(t, context.Background(), nil))
			require.ErrorIs(t, err, executor.ErrTimeout)
			st := stats(t, g, "api")
			assert.Zero(t, st.InUse)
			assert.Equal(t, uint64(1), st.Timeouts)
		})
	})

	t.Run("a nil response with a nil error is the Base's failure", func(t *testing.T) {
		tr, g := fakeTransport(t, oneSlot(), func(*http.Request) (*http.Response, error) { return nil, nil })
		resp, err := tr.RoundTrip(newRequest(t, context.Background(), nil))
		require.ErrorContains(t, err, "Transport.Base")
		assert.Nil(t, resp)
		st := stats(t, g, "api")
		assert.Zero(t, st.InUse)
		assert.Equal(t, uint64(1), st.Failures)
	})
}
