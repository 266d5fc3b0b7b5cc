package breaker_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
)

// Issue 10.2: a panicking user callback must leave the breaker consistent.
// Done records the failure first and then re-raises the panic on the
// caller's own goroutine; a half-open probe's place is never lost.
func TestDoneWithAPanickingClassifierRecordsAFailureThenPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(t, breaker.Config{ResetTimeout: time.Second,
			Classify: func(error) breaker.Outcome { panic("classifier bug") }})
		b.Trip(breaker.Manual)
		time.Sleep(time.Second)
		p, err := b.Allow()
		require.NoError(t, err)
		require.True(t, p.Probe())
		var got any
		func() {
			defer func() { got = recover() }()
			p.Done(errBoom)
		}()
		var pe *breaker.PanicError
		require.ErrorAs(t, got.(error), &pe)
		assert.Equal(t, "Classify", pe.Callback)
		assert.Equal(t, "classifier bug", pe.Value)
		assert.Equal(t, breaker.Open, b.State(), "the failed probe re-opened the breaker")
		assert.Equal(t, breaker.ProbeFailed, b.Stats().Reason)
	})
}

func TestRecordWithAPanickingMatchCountsAPlainFailure(t *testing.T) {
	b := newBreaker(t, breaker.Config{ConsecutiveFailures: 2, ErrorKinds: []breaker.KindRule{
		{Name: "refused", Consecutive: 10, Match: func(error) bool { panic("match bug") }}}})
	for i := range 2 {
		p, err := b.Allow()
		require.NoError(t, err)
		o, cerr := b.Classify(errBoom)
		require.NoError(t, cerr)
		var pe *breaker.PanicError
		require.ErrorAs(t, p.Record(o, errBoom), &pe, "call %d", i)
		assert.Equal(t, "ErrorKinds[0].Match (refused)", pe.Callback)
	}
	assert.Equal(t, breaker.Open, b.State(), "the failures counted towards ConsecutiveFailures")
	assert.Equal(t, breaker.ConsecutiveFailures, b.Stats().Reason)
}
