package overload

import (
	"context"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestATracedLoadSplitsItsServedRequestsTime(t *testing.T) {
	// A handler that takes 20 ms behind the trace: the split puts it
	// between Allow and the handler's end, and the server counts the
	// quiet tenant's requests.
	h := TraceOuter(TraceInner(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond)
		w.WriteHeader(http.StatusOK)
	})))
	srv := httptest.NewServer(h)
	defer srv.Close()
	c := Client()
	defer c.CloseIdleConnections()
	before := TraceCounts()["quiet"]
	res := Load{Base: srv.URL, Rate: 100, Dur: 200 * time.Millisecond, Deadline: time.Second, Trace: true,
		Next: func(_ *rand.Rand, i int) Request {
			return Request{Path: "/", Header: http.Header{"X-Tenant": {"quiet-1"}}, Class: "quiet"}
		}}.Run(context.Background(), c)
	require.Equal(t, 20, res.All.Good)
	require.Len(t, res.All.Splits, 20)
	q := res.All.Splits.Quantile(0.5)
	assert.GreaterOrEqual(t, q.Handler, 20*time.Millisecond, "the handler's part")
	assert.Less(t, q.ToAllow, 10*time.Millisecond, "nothing between arrival and Allow here")
	assert.GreaterOrEqual(t, q.Total(), q.Handler)
	p, n := res.All.Splits.P99After(100 * time.Millisecond)
	assert.Equal(t, 10, n, "requests sent after 100 ms")
	assert.GreaterOrEqual(t, p, 20*time.Millisecond)
	after := TraceCounts()["quiet"]
	assert.Equal(t, uint64(20), after.Arrived-before.Arrived)
	assert.Equal(t, uint64(20), after.Admitted-before.Admitted)
	assert.Zero(t, after.DoneLate-before.DoneLate)
}
