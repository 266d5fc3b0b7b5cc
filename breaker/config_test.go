package breaker_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
)

func TestConfigValidation(t *testing.T) {
	match := func(error) bool { return true }
	tests := []struct {
		name string
		cfg  breaker.Config
		want string // substring of the error; "" means valid
	}{
		{"the zero config is valid", breaker.Config{}, ""},
		{"negative consecutive failures", breaker.Config{ConsecutiveFailures: -2}, "ConsecutiveFailures must be in [1, 1073741824], 0 (default 5) or -1 (off), got -2"},
		{"a threshold that would not fit", breaker.Config{ConsecutiveFailures: 1<<32 + 1}, "ConsecutiveFailures must be in [1, 1073741824]"},
		{"a negative reset timeout", breaker.Config{ResetTimeout: -time.Second}, "ResetTimeout must be in [0, 876000h0m0s], got -1s"},
		{"a reset timeout that would overflow the clock", breaker.Config{ResetTimeout: math.MaxInt64 - 1}, "ResetTimeout must be in [0, 876000h0m0s]"},
		{"a window too large to allocate", breaker.Config{FailureRate: 0.5, WindowSize: 1 << 60}, "WindowSize must be in [0, 1048576]"},
		{"too many buckets", breaker.Config{WindowDuration: time.Hour, WindowBuckets: 1 << 20}, "WindowBuckets must be in [0, 65536]"},
		{"a max reset timeout below the reset timeout", breaker.Config{ResetTimeout: 10 * time.Second, MaxResetTimeout: time.Second}, "MaxResetTimeout (1s) must be ≥ ResetTimeout (10s)"},
		{"a negative max reset timeout", breaker.Config{MaxResetTimeout: -1}, "MaxResetTimeout must be in [0, 876000h0m0s]"},
		{"a failure rate above 1", breaker.Config{FailureRate: 1.5}, "FailureRate must be in (0, 1] or 0 (off), got 1.5"},
		{"a window size without a rate rule (issue 10.8)", breaker.Config{WindowSize: 50}, "WindowSize needs a rate rule (FailureRate or SlowCallRate)"},
		{"a window duration without a rate rule", breaker.Config{WindowDuration: time.Minute}, "WindowDuration needs a rate rule"},
		{"a minimum number of calls without a rate rule", breaker.Config{MinimumCalls: 5}, "MinimumCalls needs a rate rule"},
		{"buckets without a window duration", breaker.Config{FailureRate: 0.5, WindowBuckets: 4}, "WindowBuckets (4) needs WindowDuration"},
		{"a window with a slow-call rule is valid", breaker.Config{SlowCallRate: 0.5, SlowCallDuration: time.Second, WindowSize: 50}, ""},
		{"a negative failure rate", breaker.Config{FailureRate: -0.1}, "FailureRate must be in (0, 1]"},
		{"a NaN failure rate", breaker.Config{FailureRate: math.NaN()}, "FailureRate must be in (0, 1] or 0 (off), got NaN"},
		{"a failure rate of exactly 1", breaker.Config{FailureRate: 1}, ""},
		{"a NaN slow-call rate", breaker.Config{SlowCallRate: math.NaN(), SlowCallDuration: time.Second}, "SlowCallRate must be in (0, 1]"},
		{"a slow-call rate without a duration", breaker.Config{SlowCallRate: 0.5}, "SlowCallDuration must be set when SlowCallRate is"},
		{"a slow-call duration without a rate", breaker.Config{SlowCallDuration: time.Second}, "SlowCallRate must be set when SlowCallDuration is"},
		{"a negative slow-call duration", breaker.Config{SlowCallDuration: -1}, "SlowCallDuration must be ≥ 0"},
		{"negative probes", breaker.Config{HalfOpenProbes: -1}, "HalfOpenProbes must be in [1, 1000] or 0 (default 1), got -1"},
		{"too many probes", breaker.Config{HalfOpenProbes: 1001}, "HalfOpenProbes must be in [1, 1000]"},
		{"a NaN jitter", breaker.Config{ResetJitter: math.NaN()}, "ResetJitter must be in [0, 1], got NaN"},
		{"a jitter above 1", breaker.Config{ResetJitter: 2}, "ResetJitter must be in [0, 1], got 2"},
		{"negative minimum calls", breaker.Config{MinimumCalls: -1}, "MinimumCalls must be ≥ 0, got -1"},
		{"a negative window size", breaker.Config{WindowSize: -1}, "WindowSize must be in [0, 1048576], got -1"},
		{"both window kinds", breaker.Config{WindowSize: 10, WindowDuration: time.Minute}, "WindowSize and WindowDuration are exclusive"},
		{"a minimum above the window size", breaker.Config{FailureRate: 0.5, WindowSize: 5, MinimumCalls: 6}, "MinimumCalls (6) must not exceed WindowSize (5)"},
		{"buckets narrower than a microsecond", breaker.Config{WindowDuration: time.Microsecond, WindowBuckets: 10}, "WindowDuration/WindowBuckets must be ≥ 1µs"},
		{"negative buckets", breaker.Config{WindowDuration: time.Minute, WindowBuckets: -1}, "WindowBuckets must be in [0, 65536]"},
		{"a kind without a name", breaker.Config{ErrorKinds: []breaker.KindRule{{Match: match, Consecutive: 1}}}, "ErrorKinds[0].Name must not be empty"},
		{"a kind without a matcher", breaker.Config{ErrorKinds: []breaker.KindRule{{Name: "x", Consecutive: 1}}}, "ErrorKinds[0].Match must not be nil"},
		{"a kind with a zero threshold", breaker.Config{ErrorKinds: []breaker.KindRule{{Name: "x", Match: match}}}, "ErrorKinds[0].Consecutive must be in [1, 1073741824], got 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := breaker.New(tt.cfg)
			if tt.want == "" {
				require.NoError(t, err)
				require.NotNil(t, b)
				return
			}
			require.Error(t, err)
			assert.Nil(t, b)
			assert.Contains(t, err.Error(), tt.want)
			assert.Contains(t, err.Error(), "breaker: ")
		})
	}
	t.Run("every invalid field is reported at once", func(t *testing.T) {
		_, err := breaker.New(breaker.Config{FailureRate: 2, HalfOpenProbes: -1})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "FailureRate")
		assert.Contains(t, err.Error(), "HalfOpenProbes")
	})
}

func TestStrings(t *testing.T) {
	assert.Equal(t, "closed", breaker.Closed.String())
	assert.Equal(t, "half-open", breaker.HalfOpen.String())
	assert.Equal(t, "forced-open", breaker.ForcedOpen.String())
	assert.Equal(t, "disabled", breaker.Disabled.String())
	assert.Equal(t, "State(99)", breaker.State(99).String())
	assert.Equal(t, "saturation", breaker.Saturation.String())
	assert.Equal(t, "probe-deferred", breaker.ProbeDeferred.String())
	assert.Equal(t, "manual", breaker.Manual.String())
	assert.Equal(t, "none", breaker.NoReason.String())
	assert.Equal(t, "Reason(99)", breaker.Reason(99).String())
	assert.Equal(t, "ignored", breaker.Ignored.String())
	assert.Equal(t, "Outcome(9)", breaker.Outcome(9).String())
}
