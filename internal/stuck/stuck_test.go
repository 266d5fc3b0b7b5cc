package stuck

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/internal/latency"
)

func TestSpanEncoding(t *testing.T) {
	cases := []struct {
		name string
		d    time.Duration
		want time.Duration // decoded
	}{
		{"zero stays zero", 0, 0},
		{"a second to the microsecond", time.Second + 1500*time.Nanosecond, time.Second + time.Microsecond},
		{"just under half an hour in microseconds", (1<<31 - 1) * time.Microsecond, (1<<31 - 1) * time.Microsecond},
		{"an hour in milliseconds", time.Hour + 1500*time.Microsecond, time.Hour + time.Millisecond},
		{"twenty days in milliseconds", 20 * 24 * time.Hour, 20 * 24 * time.Hour},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := SpanOf(int64(c.d))
			assert.NotEqual(t, uint32(math.MaxUint32), s)
			assert.Equal(t, int64(c.want), SpanNs(s))
		})
	}
	t.Run("beyond about 24 days it saturates: never old", func(t *testing.T) {
		assert.Equal(t, uint32(math.MaxUint32), SpanOf(int64(30*24*time.Hour)))
	})
}

func TestResolve(t *testing.T) {
	var bad []string
	collect := func(format string, _ ...any) { bad = append(bad, format) }

	t.Run("the zero Config is the default rule", func(t *testing.T) {
		bad = nil
		p := Resolve(Config{}, 10*time.Second, 5, collect)
		assert.Empty(t, bad)
		assert.Equal(t, Policy{MinAge: int64(DefaultMinAge), MaxAge: int64(5 * time.Second), Multiple: DefaultMultiple,
			NeedRunning: 3, NeedQueued: 1}, p)
	})
	t.Run("the floor never exceeds a short ceiling", func(t *testing.T) {
		bad = nil
		p := Resolve(Config{}, 400*time.Millisecond, 2, collect)
		assert.Empty(t, bad)
		assert.Equal(t, int64(200*time.Millisecond), p.MinAge)
	})
	t.Run("each bad field is reported by name", func(t *testing.T) {
		bad = nil
		Resolve(Config{Multiple: 0.5, MinAge: -1, MaxAge: time.Minute}, time.Second, 1, collect)
		require.Len(t, bad, 3)
		assert.Contains(t, bad[0], "Stuck.Multiple")
		assert.Contains(t, bad[1], "Stuck.MaxAge")
		assert.Contains(t, bad[2], "Stuck.MinAge")
	})
	t.Run("NaN is no multiple", func(t *testing.T) {
		bad = nil
		Resolve(Config{Multiple: math.NaN()}, time.Second, 1, collect)
		require.Len(t, bad, 1)
	})
}

// The threshold is clamp(Multiple × p99, MinAge, MaxAge), and MaxAge
// until there is a history.
func TestAfter(t *testing.T) {
	var s State[func()]
	s.Put(Resolve(Config{Multiple: 4, MinAge: 100 * time.Millisecond}, 10*time.Second, 4, nil), nil)
	assert.Equal(t, int64(5*time.Second), s.After(), "no history: the ceiling")

	for range latency.Minimum {
		s.Observe(int64(200*time.Millisecond), 0, true, int64(10*time.Second), true)
	}
	got := time.Duration(s.After())
	assert.InDelta(t, float64(800*time.Millisecond), float64(got), float64(200*time.Millisecond), "4 × a p99 of 200 ms, within a bucket")

	s.BusyUntil.Store(42)
	s.Put(Resolve(Config{Multiple: 100}, 10*time.Second, 4, nil), nil)
	assert.Zero(t, s.BusyUntil.Load(), "a new criterion forgets the cached busy time")
	assert.Equal(t, int64(5*time.Second), s.After(), "100 × 200 ms is over the ceiling")
}

// Only the present teaches: a late call, one as long as the timeout now
// in force, or one of an older breaker generation is not sampled.
func TestObserveLearnsOnlyFromThePresent(t *testing.T) {
	const timeout = int64(time.Second)
	cases := []struct {
		name            string
		d               int64
		inTime, current bool
	}{
		{"a call that returned after its deadline", int64(time.Millisecond), false, true},
		{"a call as long as the timeout in force", timeout, true, true},
		{"a call of an older generation", int64(time.Millisecond), true, false},
		{"a call of unknown duration", -1, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var s State[func()]
			for range latency.Minimum {
				s.Observe(c.d, 0, c.inTime, timeout, c.current)
			}
			assert.Zero(t, s.Quantile(0.99), "no history")
		})
	}
	t.Run("a call in time, of the current generation", func(t *testing.T) {
		var s State[func()]
		for range latency.Minimum {
			s.Observe(int64(time.Millisecond), 0, true, timeout, true)
		}
		assert.NotZero(t, s.Quantile(0.99))
	})
}

// After the warm-up, one call in latency.Every of each bucket is sampled.
func TestObserveThinsAfterTheWarmUp(t *testing.T) {
	var s State[func()]
	for i := range latency.Warm {
		s.Observe(int64(time.Millisecond), uint64(i+1), true, int64(time.Second), true)
	}
	require.True(t, s.warm.Load())
	n := s.lat.Load().Samples()
	for i := range latency.Every * 10 {
		s.Observe(int64(time.Millisecond), uint64(i+1), true, int64(time.Second), true)
	}
	assert.Equal(t, n+10, s.lat.Load().Samples())
}

func TestSpanBound(t *testing.T) {
	var b SpanBound
	assert.Equal(t, int64(10), b.Widen(10, 0), "nothing replaced")
	b.Replaced(100, 1000)
	assert.Equal(t, int64(100), b.Widen(10, 1050), "calls of the old span may still be listed")
	assert.Equal(t, int64(10), b.Widen(10, 1100), "the last of them has left")
	assert.Equal(t, int64(math.MaxInt64), AddSat(math.MaxInt64-1, 5))
}
