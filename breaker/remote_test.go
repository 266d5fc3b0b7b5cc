package breaker_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/fuseboxtest"
)

func TestOpenRemote(t *testing.T) {
	t.Run("a closed breaker opens with reason Remote until the other replica's probe time", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			rec := &fuseboxtest.Recorder{}
			b := newBreaker(t, breaker.Config{ResetTimeout: 10 * time.Second, OnTransition: rec.Listen})
			time.Sleep(time.Second)
			now := time.Now()
			require.True(t, b.OpenRemote(now.Add(-time.Millisecond), now.Add(7*time.Second)))
			s := b.Stats()
			assert.Equal(t, breaker.Open, s.State)
			assert.Equal(t, breaker.Remote, s.Reason)
			assert.Equal(t, now.Add(7*time.Second), s.OpenUntil)
			assert.Equal(t, []string{"closed>open:remote"}, transitions(rec.Events()))
			_, err := b.Allow()
			require.ErrorIs(t, err, breaker.ErrOpen)
			time.Sleep(7 * time.Second)
			p, err := b.Allow()
			require.NoError(t, err, "the probe is due at the remote probe time")
			assert.True(t, p.Probe())
		})
	})
	t.Run("a probe time already past opens until now: the next call probes", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := newBreaker(t, breaker.Config{})
			time.Sleep(time.Second)
			now := time.Now()
			require.True(t, b.OpenRemote(now, now.Add(-time.Second)))
			assert.Equal(t, now, b.Stats().OpenUntil)
		})
	})
	t.Run("local evidence newer than the remote trip wins", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := newBreaker(t, breaker.Config{ResetTimeout: 10 * time.Second})
			remoteTrip := time.Now()
			time.Sleep(time.Second)
			b.Trip(breaker.Saturation) // open on its own evidence, after the remote trip
			time.Sleep(10 * time.Second)
			succeed(b) // and closed again by its own probe
			assert.False(t, b.OpenRemote(remoteTrip, time.Now().Add(time.Hour)))
			assert.Equal(t, breaker.Closed, b.State())
		})
	})
	t.Run("a breaker that never changed state applies a trip older than itself", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			// A replica makes a supplier's breaker after the fleet tripped
			// it: on first use, or when it starts during the outage. Its
			// creation is no evidence about the supplier.
			remoteTrip := time.Now()
			time.Sleep(time.Second)
			b := newBreaker(t, breaker.Config{ResetTimeout: 10 * time.Second})
			succeed(b) // calls that succeed are no state change either
			b.Reset()  // nor is a Reset of a closed breaker
			require.True(t, b.OpenRemote(remoteTrip, remoteTrip.Add(10*time.Second)))
			s := b.Stats()
			assert.Equal(t, breaker.Open, s.State)
			assert.Equal(t, breaker.Remote, s.Reason)
			assert.Equal(t, remoteTrip.Add(10*time.Second), s.OpenUntil)
		})
	})
	t.Run("an open breaker only moves its probe time later, without an event", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			rec := &fuseboxtest.Recorder{}
			b := newBreaker(t, breaker.Config{ResetTimeout: 10 * time.Second, OnTransition: rec.Listen})
			b.Trip(breaker.Saturation)
			until := b.Stats().OpenUntil
			time.Sleep(time.Second)
			now := time.Now()
			assert.False(t, b.OpenRemote(now, until.Add(-time.Second)), "never shortened")
			assert.Equal(t, until, b.Stats().OpenUntil)
			require.True(t, b.OpenRemote(now, until.Add(3*time.Second)))
			s := b.Stats()
			assert.Equal(t, until.Add(3*time.Second), s.OpenUntil)
			assert.Equal(t, breaker.Saturation, s.Reason, "still the replica's own reason")
			assert.Equal(t, []string{"closed>open:saturation"}, transitions(rec.Events()))
		})
	})
	t.Run("operator overrides ignore remote word", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			for _, override := range []func(*breaker.Breaker){(*breaker.Breaker).ForceOpen, (*breaker.Breaker).Disable} {
				b := newBreaker(t, breaker.Config{})
				override(b)
				state := b.State()
				time.Sleep(time.Second)
				now := time.Now()
				assert.False(t, b.OpenRemote(now, now.Add(time.Minute)))
				assert.False(t, b.CloseRemote(now))
				assert.Equal(t, state, b.State())
			}
		})
	})
}

func TestCloseRemote(t *testing.T) {
	t.Run("an open breaker closes with reason Remote when another replica's probe succeeded", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			rec := &fuseboxtest.Recorder{}
			b := newBreaker(t, breaker.Config{ResetTimeout: 10 * time.Second, OnTransition: rec.Listen})
			b.Trip(breaker.Saturation)
			time.Sleep(10 * time.Second)
			require.True(t, b.CloseRemote(time.Now()))
			assert.Equal(t, []string{"closed>open:saturation", "open>closed:remote"}, transitions(rec.Events()))
			ran, err := call(b, func() error { return nil })
			assert.True(t, ran)
			assert.NoError(t, err)
		})
	})
	t.Run("a half-open probe admitted after the remote one keeps its own verdict", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := newBreaker(t, breaker.Config{ResetTimeout: 10 * time.Second})
			b.Trip(breaker.Saturation)
			time.Sleep(10 * time.Second)
			remoteProbe := time.Now()
			time.Sleep(time.Second)
			p, err := b.Allow()
			require.NoError(t, err)
			assert.False(t, b.CloseRemote(remoteProbe))
			assert.Equal(t, breaker.HalfOpen, b.State())
			p.Done(errBoom)
			assert.Equal(t, breaker.Open, b.State(), "its own probe failed")
		})
	})
	t.Run("a closed breaker stays as it is", func(t *testing.T) {
		b := newBreaker(t, breaker.Config{})
		assert.False(t, b.CloseRemote(time.Now()))
		assert.Zero(t, b.Stats().Generation)
	})
}

func TestHoldOpen(t *testing.T) {
	t.Run("a hold keeps the breaker open past its probe time, and giving it back lets the probe through", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := newBreaker(t, breaker.Config{ResetTimeout: 10 * time.Second})
			b.Trip(breaker.Saturation)
			s := b.Stats()
			require.True(t, b.HoldOpen(s.Generation, s.OpenUntil.Add(2*time.Second)))
			time.Sleep(11 * time.Second)
			_, err := b.Allow()
			require.ErrorIs(t, err, breaker.ErrOpen, "held")
			require.True(t, b.HoldOpen(s.Generation, s.OpenUntil))
			p, err := b.Allow()
			require.NoError(t, err)
			assert.True(t, p.Probe())
			assert.Equal(t, s.Generation+1, b.Stats().Generation, "holds are no transitions")
		})
	})
	t.Run("the probe time never moves before ResetTimeout after the opening", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := newBreaker(t, breaker.Config{ResetTimeout: 10 * time.Second})
			b.Trip(breaker.Manual)
			s := b.Stats()
			require.True(t, b.HoldOpen(s.Generation, time.Now()))
			assert.Equal(t, s.OpenUntil, b.Stats().OpenUntil)
		})
	})
	t.Run("a hold for another generation or state does nothing", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := newBreaker(t, breaker.Config{ResetTimeout: 10 * time.Second})
			assert.False(t, b.HoldOpen(0, time.Now().Add(time.Hour)), "closed")
			b.Trip(breaker.Manual)
			gen := b.Stats().Generation
			assert.False(t, b.HoldOpen(gen-1, time.Now().Add(time.Hour)))
			b.ForceOpen()
			assert.False(t, b.HoldOpen(gen+1, time.Now().Add(time.Hour)), "forced open has no probe time")
		})
	})
}
