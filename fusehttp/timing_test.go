package fusehttp_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
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
)

// These tests replace the network with an in-memory base transport, so they
// run inside testing/synctest bubbles: deadlines are exact and nothing
// waits in real time.

// fakeBase is a base transport made of a function.
type fakeBase func(*http.Request) (*http.Response, error)

func (f fakeBase) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// streamBody never ends by itself: like a real transport's body, its reads
// fail once the request's context ends.
type streamBody struct {
	ctx    context.Context
	closes atomic.Int64
}

func (b *streamBody) Read([]byte) (int, error) {
	<-b.ctx.Done()
	return 0, b.ctx.Err()
}

func (b *streamBody) Close() error { b.closes.Add(1); return nil }

// cutBody is a streamBody whose reads fail with err once the request's
// context ends, as a base's own error wrapping the context's.
type cutBody struct {
	ctx context.Context
	err error
}

func (b *cutBody) Read([]byte) (int, error) {
	<-b.ctx.Done()
	return 0, b.err
}

func (b *cutBody) Close() error { return nil }

// fakeTransport returns a Transport over base that keys every request
// "api", on a group with one slot and a one-second invocation timeout.
func fakeTransport(t *testing.T, cfg executor.Config, base fakeBase) (*fusehttp.Transport, *executor.Group) {
	t.Helper()
	g := newGroup(t, executor.GroupConfig{Default: cfg})
	return &fusehttp.Transport{Group: g, Base: base, Key: func(*http.Request) string { return "api" }}, g
}

func oneSlot() executor.Config {
	return executor.Config{Slots: 1, InvocationTimeout: time.Second}
}

func newRequest(t *testing.T, ctx context.Context, body io.Reader) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://api.test/orders", body)
	require.NoError(t, err)
	return req
}

func TestExactTiming(t *testing.T) {
	t.Run("a body never closed holds the slot exactly until the invocation timeout", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var sb *streamBody
			tr, g := fakeTransport(t, oneSlot(), func(r *http.Request) (*http.Response, error) {
				sb = &streamBody{ctx: r.Context()}
				return &http.Response{StatusCode: http.StatusOK, ContentLength: -1, Body: sb}, nil
			})
			resp, err := tr.RoundTrip(newRequest(t, t.Context(), nil))
			require.NoError(t, err)

			time.Sleep(time.Second - time.Nanosecond)
			synctest.Wait()
			assert.Equal(t, 1, stats(t, g, "api").InUse, "held a nanosecond before the deadline")
			time.Sleep(time.Nanosecond)
			synctest.Wait()
			st := stats(t, g, "api")
			assert.Equal(t, 0, st.InUse, "released at the deadline")
			assert.Equal(t, uint64(1), st.Timeouts)
			assert.Equal(t, uint64(1), st.Failures)

			_, err = resp.Body.Read(make([]byte, 1))
			require.ErrorIs(t, err, context.DeadlineExceeded, "the body is cut off")
			require.NoError(t, resp.Body.Close())
			assert.Equal(t, int64(1), sb.closes.Load())
		})
	})

	t.Run("a base that ignores its context holds its caller until it returns; the late response is a timeout, closed for the caller", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			release := make(chan struct{})
			late := newRecordingBody("too late")
			tr, g := fakeTransport(t, oneSlot(), func(*http.Request) (*http.Response, error) {
				<-release
				return &http.Response{StatusCode: http.StatusOK, ContentLength: -1, Body: late}, nil
			})
			res := make(chan error, 1)
			go func() {
				_, err := tr.RoundTrip(newRequest(t, t.Context(), nil))
				res <- err
			}()
			time.Sleep(time.Second)
			synctest.Wait()
			st := stats(t, g, "api")
			assert.Equal(t, uint64(1), st.Timeouts, "the timeout is recorded at the deadline")
			assert.Equal(t, 1, st.InUse, "the slot stays held while the base still runs")
			assert.Equal(t, 1, st.Overdue)
			require.Empty(t, res, "RoundTrip runs the base on its caller's goroutine")

			close(release)
			require.ErrorIs(t, <-res, executor.ErrTimeout)
			assert.Equal(t, int64(1), late.closes.Load(), "nobody else could close it")
			st = stats(t, g, "api")
			assert.Equal(t, 0, st.InUse)
			assert.Equal(t, 0, st.Overdue)
		})
	})

	t.Run("the caller's earlier deadline ends the call then", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			tr, _ := fakeTransport(t, oneSlot(), func(r *http.Request) (*http.Response, error) {
				<-r.Context().Done()
				return nil, r.Context().Err()
			})
			ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, err := tr.RoundTrip(newRequest(t, ctx, nil))
			require.ErrorIs(t, err, context.DeadlineExceeded)
			require.NotErrorIs(t, err, executor.ErrTimeout, "the caller's deadline, not the invocation timeout")
			assert.Equal(t, 100*time.Millisecond, time.Since(start))
		})
	})

	t.Run("a body cut off by the invocation deadline reads as executor.ErrTimeout, wrapping the base's error", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			errCut := fmt.Errorf("stream reset: %w", context.DeadlineExceeded)
			tr, _ := fakeTransport(t, oneSlot(), func(r *http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: http.StatusOK, ContentLength: -1, Body: &cutBody{ctx: r.Context(), err: errCut}}, nil
			})
			resp, err := tr.RoundTrip(newRequest(t, t.Context(), nil))
			require.NoError(t, err)
			defer resp.Body.Close()
			_, err = io.ReadAll(resp.Body)
			require.ErrorIs(t, err, executor.ErrTimeout)
			require.ErrorIs(t, err, errCut, "the base's error stays in the chain")
		})
	})

	t.Run("a body cut off by the caller's earlier deadline reads as the caller's deadline", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			tr, _ := fakeTransport(t, oneSlot(), func(r *http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: http.StatusOK, ContentLength: -1, Body: &streamBody{ctx: r.Context()}}, nil
			})
			ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
			defer cancel()
			resp, err := tr.RoundTrip(newRequest(t, ctx, nil))
			require.NoError(t, err)
			defer resp.Body.Close()
			_, err = io.ReadAll(resp.Body)
			require.ErrorIs(t, err, context.DeadlineExceeded)
			require.NotErrorIs(t, err, executor.ErrTimeout)
		})
	})

	t.Run("a request cancelled while queued is never sent, and its body is closed unread", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var sent atomic.Int64
			cfg := oneSlot()
			cfg.Queue = 1
			tr, g := fakeTransport(t, cfg, func(r *http.Request) (*http.Response, error) {
				sent.Add(1)
				<-r.Context().Done() // hangs, honouring its context
				return nil, r.Context().Err()
			})
			firstReq := newRequest(t, t.Context(), nil)
			first := make(chan error, 1)
			go func() {
				_, err := tr.RoundTrip(firstReq)
				first <- err
			}()
			synctest.Wait()

			ctx, cancel := context.WithCancel(t.Context())
			body := newRecordingBody("order=42")
			secondReq := newRequest(t, ctx, body)
			second := make(chan error, 1)
			go func() {
				_, err := tr.RoundTrip(secondReq)
				second <- err
			}()
			synctest.Wait()
			assert.Equal(t, 1, stats(t, g, "api").Queued)
			cancel()
			require.ErrorIs(t, <-second, context.Canceled)
			assert.Zero(t, body.reads.Load())
			assert.Equal(t, int64(1), body.closes.Load())

			require.ErrorIs(t, <-first, executor.ErrTimeout)
			assert.Equal(t, int64(1), sent.Load(), "only the first request was sent")
			assert.Equal(t, uint64(1), stats(t, g, "api").Cancelled)
		})
	})
}

// When nothing follows the response, the slot is free before RoundTrip
// returns: a caller that retries at once never meets its own slot.
func TestNothingToWaitForFreesTheSlotAtOnce(t *testing.T) {
	errRefused := errors.New("connection refused")
	tests := []struct {
		name    string
		resp    *http.Response
		err     error
		failure bool
	}{
		{"http.NoBody", &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil, false},
		{"204 No Content (the HTTP/2 transport's empty body)", &http.Response{StatusCode: http.StatusNoContent, ContentLength: -1, Body: io.NopCloser(strings.NewReader(""))}, nil, false},
		{"Content-Length: 0", &http.Response{StatusCode: http.StatusOK, ContentLength: 0, Body: io.NopCloser(strings.NewReader(""))}, nil, false},
		{"101 Switching Protocols", &http.Response{StatusCode: http.StatusSwitchingProtocols, ContentLength: -1, Body: io.NopCloser(strings.NewReader(""))}, nil, false},
		{"a transport error", nil, errRefused, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr, g := fakeTransport(t, oneSlot(), func(*http.Request) (*http.Response, error) { return tt.resp, tt.err })
				for range 3 {
					resp, err := tr.RoundTrip(newRequest(t, t.Context(), nil))
					if tt.err != nil {
						require.ErrorIs(t, err, tt.err)
					} else {
						require.NoError(t, err)
						assert.Equal(t, tt.resp.Body, resp.Body, "the body is passed through")
					}
					assert.Equal(t, 0, stats(t, g, "api").InUse, "free before RoundTrip returned")
				}
				st := stats(t, g, "api")
				if tt.failure {
					assert.Equal(t, uint64(3), st.Failures)
				} else {
					assert.Equal(t, uint64(3), st.Successes)
				}
			})
		})
	}

	t.Run("a panicking base becomes a PanicError", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			tr, g := fakeTransport(t, oneSlot(), func(*http.Request) (*http.Response, error) { panic("bad base") })
			_, err := tr.RoundTrip(newRequest(t, t.Context(), nil))
			var perr *breaker.PanicError
			require.ErrorAs(t, err, &perr)
			assert.Equal(t, "bad base", perr.Value)
			st := stats(t, g, "api")
			assert.Equal(t, 0, st.InUse)
			assert.Equal(t, uint64(1), st.Panics)
		})
	})
}

// Outside a bubble, with real goroutines on every core: a caller that
// retries a failed request at once must never find its own slot still held
// (with one slot, that would trip the breaker on saturation).
func TestImmediateRetryNeverMeetsItsOwnSlot(t *testing.T) {
	errRefused := errors.New("connection refused")
	cfg := oneSlot()
	cfg.Breaker.ConsecutiveFailures = -1 // only saturation could trip it
	// A timeout out of reach: on a loaded machine a request can wait past a
	// second for a CPU, and its timeout is not the refusal looked for here.
	cfg.InvocationTimeout, cfg.Breaker.ResetTimeout = time.Minute, 2*time.Minute
	tr, g := fakeTransport(t, cfg, func(*http.Request) (*http.Response, error) { return nil, errRefused })
	for i := range 500 {
		_, err := tr.RoundTrip(newRequest(t, t.Context(), nil))
		require.ErrorIs(t, err, errRefused, "attempt %d", i)
	}
	assert.Equal(t, uint64(500), stats(t, g, "api").Failures)
}
