package breaker_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
)

// A nil or zero Breaker (a field never set, a failed New ignored) refuses
// calls with an error and answers the other methods emptily: never a
// panic, and never a call admitted without a breaker behind it.
func TestNilAndZeroBreakers(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    *breaker.Breaker
	}{{"nil", nil}, {"zero", &breaker.Breaker{}}} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.b
			require.NotPanics(t, func() {
				p, err := b.Allow()
				require.ErrorContains(t, err, "nil or zero *Breaker")
				assert.NotErrorIs(t, err, breaker.ErrOpen, "not an open breaker: one that does not exist")
				p.Done(nil) // the zero Permit
				assert.NoError(t, p.Record(breaker.Failure, nil))
				p.Reject(breaker.Saturation)
				assert.False(t, p.Probe())
				assert.False(t, p.Current())
				o, perr := b.Classify(errors.New("supplier failed"))
				assert.Equal(t, breaker.Failure, o, "classified as DefaultClassify does")
				assert.NoError(t, perr)
				assert.False(t, b.Drained())
				assert.Equal(t, breaker.ForcedOpen, b.State(), "it admits nothing")
				assert.Equal(t, breaker.Stats{State: breaker.ForcedOpen}, b.Stats(), "the state State reports, nothing counted")
				assert.Error(t, b.Trip(breaker.Manual))
				assert.Error(t, b.Reconfigure(breaker.Config{}))
				b.Reset()
				b.ForceOpen()
				b.Disable()
				now := time.Now()
				assert.False(t, b.OpenRemote(now, now.Add(time.Second)))
				assert.False(t, b.CloseRemote(now))
				assert.False(t, b.HoldOpen(0, now))
			})
		})
	}
}
