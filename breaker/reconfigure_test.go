package breaker_test

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
)

func TestReconfigure(t *testing.T) {
	t.Run("an open breaker stays open until the same moment, in the same generation", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := newBreaker(t, breaker.Config{ConsecutiveFailures: 1, ResetTimeout: 10 * time.Second})
			require.NoError(t, fail(b))
			before := b.Stats()
			require.Equal(t, breaker.Open, before.State)

			require.NoError(t, b.Reconfigure(breaker.Config{ConsecutiveFailures: 3, ResetTimeout: time.Second}))
			after := b.Stats()
			assert.Equal(t, breaker.Open, after.State)
			assert.Equal(t, before.OpenUntil, after.OpenUntil, "the probe time does not move")
			assert.Equal(t, before.Generation, after.Generation)

			time.Sleep(2 * time.Second) // past the new reset timeout, not the old one
			assert.ErrorIs(t, succeed(b), breaker.ErrOpen, "the open period began under the old rules")
			time.Sleep(8 * time.Second)
			require.NoError(t, fail(b), "the probe, at the old probe time")
			require.Equal(t, breaker.Open, b.State())
			time.Sleep(time.Second) // the next open period has the new reset timeout
			require.NoError(t, succeed(b))
			assert.Equal(t, breaker.Closed, b.State())
		})
	})
	t.Run("the consecutive-failure count carries over to the new threshold", func(t *testing.T) {
		b := newBreaker(t, breaker.Config{ConsecutiveFailures: 5})
		for range 3 {
			require.NoError(t, fail(b))
		}
		require.NoError(t, b.Reconfigure(breaker.Config{ConsecutiveFailures: 4}))
		assert.Equal(t, 3, b.Stats().ConsecutiveFailures)
		require.NoError(t, fail(b))
		assert.Equal(t, breaker.Open, b.State(), "4 in a row, 3 of them before the change")
	})
	t.Run("an invalid config changes nothing and fails as New does", func(t *testing.T) {
		b := newBreaker(t, breaker.Config{ConsecutiveFailures: 2})
		require.NoError(t, fail(b))
		bad := breaker.Config{ConsecutiveFailures: -7, FailureRate: 2}
		_, want := breaker.New(bad)
		require.Error(t, want)
		err := b.Reconfigure(bad)
		require.Error(t, err)
		assert.Equal(t, want.Error(), err.Error())
		require.NoError(t, fail(b))
		assert.Equal(t, breaker.Open, b.State(), "the old threshold of 2 is still in force")
	})
	t.Run("a half-open breaker keeps its probes; fewer required probes close it", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := newBreaker(t, breaker.Config{ConsecutiveFailures: 1, ResetTimeout: time.Second, HalfOpenProbes: 3})
			require.NoError(t, fail(b))
			time.Sleep(time.Second)
			var permits []breaker.Permit
			for range 2 {
				p, err := b.Allow()
				require.NoError(t, err)
				permits = append(permits, p)
			}
			gen := b.Stats().Generation
			require.NoError(t, b.Reconfigure(breaker.Config{ConsecutiveFailures: 1, ResetTimeout: time.Second, HalfOpenProbes: 1}))
			assert.Equal(t, breaker.HalfOpen, b.State())
			assert.Equal(t, gen, b.Stats().Generation)
			permits[0].Done(nil)
			assert.Equal(t, breaker.Closed, b.State(), "one success is now enough")
			permits[1].Done(nil)
			assert.Equal(t, gen+1, b.Stats().Generation, "exactly one transition")
		})
	})
	t.Run("the window restarts under new rate rules, in the same generation", func(t *testing.T) {
		b := newBreaker(t, breaker.Config{ConsecutiveFailures: -1, FailureRate: 0.5, MinimumCalls: 4, WindowSize: 10})
		require.NoError(t, fail(b))
		require.NoError(t, fail(b))
		require.NoError(t, succeed(b))
		require.Equal(t, 3, b.Stats().WindowCalls)
		p, err := b.Allow() // in flight across the change
		require.NoError(t, err)
		gen := b.Stats().Generation
		require.NoError(t, b.Reconfigure(breaker.Config{ConsecutiveFailures: -1, FailureRate: 0.5, MinimumCalls: 2, WindowSize: 4}))
		s := b.Stats()
		assert.Equal(t, 0, s.WindowCalls)
		assert.Equal(t, gen, s.Generation)
		p.Done(errBoom)
		assert.Equal(t, uint64(1), b.Stats().Late, "the result of a permit from before the restart decides nothing")
		assert.Equal(t, breaker.Closed, b.State())
		require.NoError(t, fail(b))
		require.NoError(t, succeed(b))
		assert.Equal(t, breaker.Open, b.State(), "1 of 2 under the new rules")
	})
	t.Run("error kinds can be added to a closed breaker", func(t *testing.T) {
		b := newBreaker(t, breaker.Config{ConsecutiveFailures: 10})
		require.NoError(t, fail(b))
		kinds := []breaker.KindRule{{Name: "boom", Match: func(err error) bool { return err == errBoom }, Consecutive: 2}}
		require.NoError(t, b.Reconfigure(breaker.Config{ConsecutiveFailures: 10, ErrorKinds: kinds}))
		require.NoError(t, fail(b))
		require.NoError(t, fail(b))
		s := b.Stats()
		assert.Equal(t, breaker.Open, s.State)
		assert.Equal(t, breaker.ErrorKind, s.Reason)
		assert.Equal(t, "boom", s.Kind)
	})
}

// Reconfigure races with calls: run under -race, nothing panics, and the
// breaker ends in a state the last rules explain.
func TestReconfigureConcurrent(t *testing.T) {
	b := newBreaker(t, breaker.Config{ConsecutiveFailures: -1, FailureRate: 0.9, WindowSize: 50})
	cfgs := []breaker.Config{
		{ConsecutiveFailures: -1, FailureRate: 0.9, WindowSize: 50},
		{ConsecutiveFailures: 1000, ErrorKinds: []breaker.KindRule{{Name: "boom", Match: func(error) bool { return false }, Consecutive: 5}}},
		{ConsecutiveFailures: 1000},
		{ConsecutiveFailures: -1, SlowCallRate: 0.9, SlowCallDuration: time.Hour, WindowDuration: time.Minute},
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 2000 {
				if (i+w)%7 == 0 {
					_ = fail(b)
				} else {
					_ = succeed(b)
				}
			}
		})
	}
	wg.Go(func() {
		for i := range 400 {
			assert.NoError(t, b.Reconfigure(cfgs[i%len(cfgs)]))
		}
	})
	wg.Wait()
	assert.Equal(t, breaker.Closed, b.State(), "a failure share of 1/7 trips none of the rules")
}
