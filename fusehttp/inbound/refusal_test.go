package inbound_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusehttp/inbound"
)

// refusals returns a real refusal of each kind an executor gives.
func refusals(t *testing.T) map[string]error {
	t.Helper()
	g := newGroup(t, executor.GroupConfig{Default: executor.Config{Slots: 1,
		Breaker: breaker.Config{ResetTimeout: 30 * time.Second}}})
	busy, err := g.Executor("busy")
	require.NoError(t, err)
	l, err := busy.Lease(t.Context())
	require.NoError(t, err)
	t.Cleanup(func() { l.Done(nil) })
	_, busyErr := busy.Lease(t.Context())

	open, err := g.Executor("open")
	require.NoError(t, err)
	open.Breaker().Trip(breaker.Manual)
	_, openErr := open.Lease(t.Context())

	closed, err := executor.New("closed", executor.Config{})
	require.NoError(t, err)
	require.NoError(t, closed.Close(t.Context()))
	_, closedErr := closed.Lease(t.Context())
	return map[string]error{"busy": busyErr, "open": openErr, "closed": closedErr}
}

func TestWriteRefusal(t *testing.T) {
	r := refusals(t)
	for _, tc := range []struct {
		name  string
		err   error
		code  int
		retry string // Retry-After; "30" stands for 29 or 30
	}{
		{"a busy bulkhead: 503, come back in a second", r["busy"], 503, "1"},
		{"an open breaker: 503, come back at its probe", r["open"], 503, "30"},
		{"an open breaker's refusal wrapped by http.Client: the same", &url.Error{Op: "Get", URL: "http://payments", Err: r["open"]}, 503, "30"},
		{"a closed executor: 503, no time known", r["closed"], 503, ""},
		{"a bare breaker.ErrOpen: 503, no time known", breaker.ErrOpen, 503, ""},
		{"a queue timeout: 503, come back in a second", executor.ErrQueueTimeout, 503, "1"},
		{"an invocation timeout: 504", fmt.Errorf("charge: %w", executor.ErrTimeout), 504, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Error(t, tc.err)
			rec := httptest.NewRecorder()
			require.True(t, inbound.WriteRefusal(rec, tc.err))
			assert.Equal(t, tc.code, rec.Code)
			assert.Equal(t, http.StatusText(tc.code)+"\n", rec.Body.String(), "the status text alone")
			got := rec.Header().Get("Retry-After")
			if tc.retry == "30" {
				secs, err := strconv.Atoi(got)
				require.NoError(t, err)
				assert.InDelta(t, 30, secs, 1)
				return
			}
			assert.Equal(t, tc.retry, got)
		})
	}
	t.Run("any other error is left to the caller: nothing written", func(t *testing.T) {
		for _, err := range []error{nil, errors.New("card declined"), context.Canceled, context.DeadlineExceeded, &breaker.PanicError{Value: "boom"}} {
			rec := httptest.NewRecorder()
			assert.False(t, inbound.WriteRefusal(rec, err), "%v", err)
			assert.False(t, rec.Flushed)
			assert.Empty(t, rec.Body.String())
			assert.Empty(t, rec.Header())
		}
	})
}
