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

func TestReadyToTrip(t *testing.T) {
	t.Run("a gobreaker-style rule trips alone, with its own reason and the failure that tipped it", func(t *testing.T) {
		var rec fuseboxtest.Recorder
		var asked []breaker.Counts
		b := newBreaker(t, breaker.Config{
			ConsecutiveFailures: -1,
			OnTransition:        rec.Listen,
			ReadyToTrip: func(c breaker.Counts) bool {
				asked = append(asked, c)
				return c.Calls >= 3 && c.FailureRate >= 0.6
			},
		})
		require.NoError(t, fail(b))
		require.NoError(t, succeed(b))
		assert.Equal(t, breaker.Closed, b.State())
		require.NoError(t, fail(b))
		assert.Equal(t, breaker.Open, b.State())
		require.Len(t, rec.Events(), 1)
		assert.Equal(t, breaker.ReadyToTrip, rec.Events()[0].Reason)
		assert.ErrorIs(t, rec.Events()[0].Err, errBoom)
		assert.Equal(t, "ready-to-trip", breaker.ReadyToTrip.String())
		assert.Equal(t, []breaker.Counts{
			{ConsecutiveFailures: 1, Calls: 1, Failures: 1, FailureRate: 1},
			{ConsecutiveFailures: 0, Calls: 2, Failures: 1, FailureRate: 0.5},
			{ConsecutiveFailures: 1, Calls: 3, Failures: 2, FailureRate: 2.0 / 3},
		}, asked, "the counts after each call, the consecutive one kept with its rule off")
	})

	t.Run("any rule trips: the built-in one first, the custom one on a success", func(t *testing.T) {
		never := newBreaker(t, breaker.Config{ConsecutiveFailures: 2, ReadyToTrip: func(breaker.Counts) bool { return false }})
		fail(never)
		fail(never)
		assert.Equal(t, breaker.ConsecutiveFailures, never.Stats().Reason)

		onSuccess := newBreaker(t, breaker.Config{ReadyToTrip: func(c breaker.Counts) bool { return c.Calls == 2 }})
		succeed(onSuccess)
		assert.Equal(t, breaker.Closed, onSuccess.State())
		succeed(onSuccess)
		assert.Equal(t, breaker.Open, onSuccess.State())
		assert.Equal(t, breaker.ReadyToTrip, onSuccess.Stats().Reason)
	})

	t.Run("a window and slow calls are counted for it alone", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := newBreaker(t, breaker.Config{
				WindowDuration:   10 * time.Second,
				SlowCallDuration: time.Second,
				ReadyToTrip:      func(c breaker.Counts) bool { return c.SlowCalls >= 2 && c.SlowCallRate >= 0.5 },
			})
			slow := func() {
				p, err := b.Allow()
				require.NoError(t, err)
				time.Sleep(1500 * time.Millisecond)
				p.Done(nil)
			}
			slow()
			succeed(b)
			assert.Equal(t, breaker.Closed, b.State())
			slow()
			assert.Equal(t, breaker.Open, b.State(), "2 slow of 3")
		})
	})

	t.Run("a panic does not trip, reaches the caller as a *PanicError, and the other rules still decide", func(t *testing.T) {
		b := newBreaker(t, breaker.Config{ConsecutiveFailures: 3, ReadyToTrip: func(breaker.Counts) bool { panic("bug") }})
		for i := range 2 {
			var perr *breaker.PanicError
			func() {
				defer func() { perr, _ = recover().(*breaker.PanicError) }()
				fail(b)
			}()
			require.NotNil(t, perr, "call %d", i)
			assert.Equal(t, "ReadyToTrip", perr.Callback)
			assert.Equal(t, "bug", perr.Value)
			assert.Equal(t, breaker.Closed, b.State())
		}
		assert.Equal(t, uint64(2), b.Stats().Failures, "the outcomes were recorded")
		fail(b) // the third failure trips by ConsecutiveFailures before the rule is asked
		assert.Equal(t, breaker.Open, b.State())
		assert.Equal(t, breaker.ConsecutiveFailures, b.Stats().Reason)
	})

	t.Run("Reconfigure adds the rule to a running breaker", func(t *testing.T) {
		b := newBreaker(t, breaker.Config{})
		fail(b)
		require.NoError(t, b.Reconfigure(breaker.Config{ReadyToTrip: func(c breaker.Counts) bool { return c.ConsecutiveFailures >= 2 }}))
		fail(b)
		assert.Equal(t, breaker.Open, b.State(), "the consecutive count carried over")
		assert.Equal(t, breaker.ReadyToTrip, b.Stats().Reason)
	})
}

func TestReadyToTripValidation(t *testing.T) {
	rule := func(breaker.Counts) bool { return false }
	tests := []struct {
		name string
		cfg  breaker.Config
		want string // "" means valid
	}{
		{"a count-based window for the rule alone is valid", breaker.Config{ReadyToTrip: rule, WindowSize: 5}, ""},
		{"a time-based window for the rule alone is valid", breaker.Config{ReadyToTrip: rule, WindowDuration: time.Minute, WindowBuckets: 6}, ""},
		{"a slow-call duration for the rule alone is valid", breaker.Config{ReadyToTrip: rule, SlowCallDuration: time.Second}, ""},
		{"minimum calls gate only the rate rules", breaker.Config{ReadyToTrip: rule, MinimumCalls: 5}, "MinimumCalls needs a rate rule (FailureRate or SlowCallRate)"},
		{"a window without any rule names the rule", breaker.Config{WindowSize: 5}, "WindowSize needs a rate rule (FailureRate or SlowCallRate) or ReadyToTrip"},
		{"a slow-call duration without a rule names the rule", breaker.Config{SlowCallDuration: time.Second}, "SlowCallRate must be set when SlowCallDuration is (or ReadyToTrip"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := breaker.New(tt.cfg)
			if tt.want == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tt.want)
		})
	}
}

// ReadyToTrip beside its same-run baseline, the built-in failure rate over
// the same count-based window: the rule is asked after every call.
func BenchmarkAllowDoneClosedReadyToTrip(b *testing.B) {
	for _, c := range []struct {
		name string
		cfg  breaker.Config
	}{
		{"failure-rate", breaker.Config{FailureRate: 0.5}},
		{"ready-to-trip", breaker.Config{ReadyToTrip: func(c breaker.Counts) bool { return c.Calls >= 10 && c.FailureRate >= 0.5 }}},
	} {
		b.Run(c.name, func(b *testing.B) {
			br, _ := breaker.New(c.cfg)
			b.ReportAllocs()
			for b.Loop() {
				p, _ := br.Allow()
				p.Done(nil)
			}
		})
	}
}
