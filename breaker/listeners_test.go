package breaker_test

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/fuseboxtest"
)

func TestListeners(t *testing.T) {
	t.Run("every listener gets every event, in order", func(t *testing.T) {
		var got []string
		l := breaker.Listeners(
			func(e breaker.Event) { got = append(got, "logs:"+e.To.String()) },
			nil,
			func(e breaker.Event) { got = append(got, "metrics:"+e.To.String()) },
		)
		b := newBreaker(t, breaker.Config{ConsecutiveFailures: 1, OnTransition: l})
		fail(b)
		b.Reset()
		assert.Equal(t, []string{"logs:open", "metrics:open", "logs:closed", "metrics:closed"}, got)
	})
	t.Run("a listener that panics does not keep the event from the next", func(t *testing.T) {
		var got int
		l := breaker.Listeners(func(breaker.Event) { panic("hook bug") }, func(breaker.Event) { got++ })
		b := newBreaker(t, breaker.Config{ConsecutiveFailures: 1, OnTransition: l})
		require.NotPanics(t, func() { fail(b) })
		assert.Equal(t, 1, got)
		assert.Equal(t, breaker.Open, b.State())
	})
	t.Run("no listener means no events", func(t *testing.T) {
		assert.Nil(t, breaker.Listeners())
		assert.Nil(t, breaker.Listeners(nil, nil))
	})
}

func TestEventsCarryTheErrorThatCausedThem(t *testing.T) {
	t.Run("consecutive failures and probes report their failure", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			refused := errors.New("connection refused")
			rec := &fuseboxtest.Recorder{}
			b := newBreaker(t, breaker.Config{ConsecutiveFailures: 2, ResetTimeout: time.Second, OnTransition: rec.Listen})
			fail(b)
			p, err := b.Allow()
			require.NoError(t, err)
			p.Done(refused) // the second failure in a row trips
			time.Sleep(time.Second)
			p, err = b.Allow() // the probe
			require.NoError(t, err)
			p.Done(errBoom)
			b.Trip(breaker.Manual)

			require.Len(t, rec.Events(), 3, "closed→open, open→half-open, half-open→open")
			assert.Equal(t, refused, rec.Events()[0].Err, "the failure that reached the threshold")
			assert.NoError(t, rec.Events()[1].Err, "the reset timeout has no error")
			assert.Equal(t, errBoom, rec.Events()[2].Err, "the failed probe")
		})
	})
	t.Run("a rate rule reports the failure that tipped it", func(t *testing.T) {
		rec := &fuseboxtest.Recorder{}
		b := newBreaker(t, breaker.Config{ConsecutiveFailures: -1, FailureRate: 0.5, MinimumCalls: 4, WindowSize: 4, OnTransition: rec.Listen})
		succeed(b)
		succeed(b)
		fail(b)
		refused := errors.New("connection refused")
		p, err := b.Allow()
		require.NoError(t, err)
		p.Done(refused)
		require.Len(t, rec.Events(), 1)
		assert.Equal(t, breaker.FailureRate, rec.Events()[0].Reason)
		assert.Equal(t, refused, rec.Events()[0].Err)
	})
}
