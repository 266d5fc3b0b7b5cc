package fusehttp_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusehttp"
)

// A request net/http's own Transport refuses (nil, or without a URL), or
// one sent through a nil *Transport, fails at once with an error saying
// which, instead of a panic on the caller's goroutine; its body is closed,
// as the RoundTripper contract asks, and nothing is sent or leased.
func TestMisuseIsAnErrorNotAPanic(t *testing.T) {
	g := newGroup(t, executor.GroupConfig{})
	base := fakeBase(func(*http.Request) (*http.Response, error) {
		t.Error("the request was sent")
		return nil, http.ErrNotSupported
	})
	for _, tc := range []struct {
		name string
		tr   *fusehttp.Transport
		req  func(body *recordingBody) *http.Request
		want string
	}{
		{"a nil request", &fusehttp.Transport{Group: g, Base: base},
			func(*recordingBody) *http.Request { return nil }, "fusehttp: nil Request"},
		{"a request without a URL", &fusehttp.Transport{Group: g, Base: base},
			func(b *recordingBody) *http.Request { return &http.Request{Method: "GET", Body: b} }, "fusehttp: nil Request.URL"},
		{"a request without a URL, with a Key", &fusehttp.Transport{Group: g, Base: base,
			Key: func(r *http.Request) string { return r.URL.Host }},
			func(b *recordingBody) *http.Request { return &http.Request{Method: "GET", Body: b} }, "fusehttp: nil Request.URL"},
		{"a nil *Transport", nil,
			func(b *recordingBody) *http.Request {
				req, err := http.NewRequest("POST", "http://example.com/", b)
				require.NoError(t, err)
				return req
			}, "fusehttp: RoundTrip on a nil *Transport"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := newRecordingBody("x")
			req := tc.req(body)
			resp, err := tc.tr.RoundTrip(req)
			assert.Nil(t, resp)
			require.EqualError(t, err, tc.want)
			if req != nil {
				assert.Equal(t, int64(1), body.closes.Load(), "the body is closed")
				assert.Zero(t, body.reads.Load(), "the body is never read")
			}
			assert.Empty(t, g.Names(), "no executor was made")
		})
	}
	t.Run("CloseIdleConnections on a nil *Transport does nothing", func(t *testing.T) {
		var tr *fusehttp.Transport
		assert.NotPanics(t, tr.CloseIdleConnections)
		assert.NotPanics(t, (&http.Client{Transport: tr}).CloseIdleConnections)
	})
}

// DefaultClassify of a nil response with a nil error (no RoundTripper may
// return it) is a failure that says why, and a nil *StatusError prints
// instead of panicking.
func TestDefaultClassifyOfNoResponseIsAFailure(t *testing.T) {
	err := fusehttp.DefaultClassify(nil, nil)
	require.EqualError(t, err, "fusehttp: DefaultClassify of a nil *http.Response with a nil error")

	var se *fusehttp.StatusError
	assert.Equal(t, "fusehttp: a nil *StatusError", se.Error())
}
