package adaptive

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func notStuck() bool { return false }

// The first window closes at its first sampled success after 100 ms, once
// it holds MinSamples of them, and feeds the limiter their mean.
func TestWindowClosesAfterItsTimeWithEnoughSamples(t *testing.T) {
	var acc atomic.Uint64
	var w Window
	lim := New(1, 100, 10)
	w.Open(&acc, 0, 1, 10)
	ms := int64(time.Millisecond)

	assert.False(t, w.Add(&acc, 20*ms, 50*ms), "before its end")
	assert.True(t, w.Add(&acc, 20*ms, 200*ms), "after its end")
	assert.False(t, w.Close(&acc, &lim, 200*ms, 0, 1, 10, notStuck), "2 samples are too few")
	for range MinSamples - 2 {
		w.Add(&acc, 20*ms, 200*ms)
	}
	require.True(t, w.Close(&acc, &lim, 200*ms, 0, 1, 10, notStuck))
	assert.Equal(t, uint64(1), w.Taken)
	assert.Zero(t, acc.Load(), "the next window starts empty")
	assert.Equal(t, 20*time.Millisecond, lim.Baseline(), "the window's mean")
	assert.True(t, w.end.Load() > 200*ms, "the next window ends later")
}

// A window's durations are summed in 48 bits of µs: a call counts at most
// MaxTimeout, and a window closes early once it holds AccFull calls, so
// the sum cannot overflow into garbage.
func TestWindowSumCannotOverflow(t *testing.T) {
	var acc atomic.Uint64
	var w Window
	lim := New(64, 64, 64)
	w.Open(&acc, 0, 1, 64)
	now := int64(200 * time.Millisecond)
	for range MinSamples {
		w.Add(&acc, int64(20*time.Hour), now)
	}
	require.True(t, w.Close(&acc, &lim, now, 0, 1, 64, notStuck))
	assert.Equal(t, MaxTimeout, lim.Baseline(), "20 h calls count as an hour")

	due := false
	for range AccFull {
		due = w.Add(&acc, int64(time.Millisecond), now) // before the window's end
	}
	assert.True(t, due, "a full window is due before its end")
	assert.True(t, w.Close(&acc, &lim, now, 0, 1, 64, notStuck), "and closes")
}

// OnChange is due at most once a second, and is told the limit it was
// last told of, not the one of every change in between.
func TestWindowTellsAtMostOnceASecond(t *testing.T) {
	var w Window
	var acc atomic.Uint64
	w.Open(&acc, 0, 1, 10)
	s := int64(time.Second)
	from, due := w.Tell(s, 20)
	assert.True(t, due)
	assert.Equal(t, 10, from)
	_, due = w.Tell(s+s/2, 40)
	assert.False(t, due, "half a second later")
	from, due = w.Tell(2*s+s/2, 30)
	assert.True(t, due)
	assert.Equal(t, 20, from, "the limit it was last told of")
}

// A window in which the breaker changed generation is not learned from:
// the limiter sees NewGen, and the stuck report of the owner.
func TestWindowReportsTheGenerationAndStuck(t *testing.T) {
	var acc atomic.Uint64
	var w Window
	lim := New(1, 100, 10)
	w.Open(&acc, 0, 1, 10)
	asked := false
	for range MinSamples {
		w.Add(&acc, int64(time.Millisecond), int64(time.Second))
	}
	require.True(t, w.Close(&acc, &lim, int64(time.Second), 0, 2, 10, func() bool { asked = true; return false }))
	assert.True(t, asked, "stuck is asked only of a window that closes")
	assert.Equal(t, 5, lim.Limit(), "a new generation: the limit restarts at half")
}

func TestResolve(t *testing.T) {
	var bad []string
	collect := func(format string, _ ...any) { bad = append(bad, format) }
	cases := []struct {
		name                string
		maxL, minL, initial int
		want                Bounds
		badField            string
	}{
		{"off", 0, 0, 0, Bounds{}, ""},
		{"Min without Max", 0, 2, 0, Bounds{}, "Adaptive.Min and Adaptive.Initial"},
		{"Max beyond the largest size", 2000, 0, 0, Bounds{}, "Adaptive.Max"},
		{"Min over Max", 4, 5, 0, Bounds{}, "Adaptive.Min"},
		{"Initial outside the bounds", 10, 2, 11, Bounds{}, "Adaptive.Initial"},
		{"Min 0 means 1; Initial 0 means Slots", 100, 0, 0, Bounds{On: true, Min: 1, Max: 100, Initial: 10}, ""},
		{"Slots kept within the bounds", 8, 2, 0, Bounds{On: true, Min: 2, Max: 8, Initial: 8}, ""},
		{"Initial as given", 100, 4, 50, Bounds{On: true, Min: 4, Max: 100, Initial: 50}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bad = nil
			got := Resolve(c.maxL, c.minL, c.initial, 10, 1000, collect)
			assert.Equal(t, c.want, got)
			if c.badField == "" {
				assert.Empty(t, bad)
			} else {
				require.Len(t, bad, 1)
				assert.Contains(t, bad[0], c.badField)
			}
		})
	}
}
