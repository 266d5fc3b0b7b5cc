package adaptive

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// win is a window of 100 ms in which the limit's calls ran at mean
// latency, inUse slots in use at its end; n successes (throughput n/100ms).
func win(n uint64, mean time.Duration, inUse int, busy uint64) Obs {
	return Obs{Dur: 100 * time.Millisecond, N: n, Mean: mean, InUse: inUse, Busy: busy}
}

func TestLimiter(t *testing.T) {
	ms := time.Millisecond
	t.Run("a limit in the way doubles in slow start while latency stays at its baseline", func(t *testing.T) {
		l := New(1, 256, 10)
		// 10 slots of 20 ms calls: 50 calls in 100 ms, every slot in use.
		assert.Equal(t, 20, l.Next(win(50, 20*ms, 10, 3)))
		assert.Equal(t, ReasonSlowStart, l.reason)
		assert.Equal(t, 40, l.Next(win(100, 20*ms, 20, 3)))
	})
	t.Run("growth stops at twice the Little's-law need", func(t *testing.T) {
		l := New(1, 256, 64)
		// 1000/s × 20 ms = 20 calls needed: the cap is 41, below 64.
		assert.Equal(t, 64, l.Next(win(100, 20*ms, 64, 9)))
		l = New(1, 256, 10)
		assert.Equal(t, 20, l.Next(win(50, 20*ms, 10, 9)), "10 × 2 ≤ 2 × 10 + 1")
		l = New(1, 256, 16)
		assert.Equal(t, 21, l.Next(win(50, 20*ms, 16, 9)), "2 × 10 + 1")
	})
	t.Run("a limit that is not in the way stays", func(t *testing.T) {
		l := New(1, 256, 40)
		assert.Equal(t, 40, l.Next(win(100, 20*ms, 20, 0)))
		assert.Equal(t, ReasonInitial, l.reason)
	})
	t.Run("latency over 1.5 × the baseline at the same throughput cuts the limit by the gradient", func(t *testing.T) {
		l := New(1, 256, 40)
		l.Next(win(100, 20*ms, 20, 0))
		got := l.Next(win(100, 60*ms, 40, 5))
		assert.Equal(t, 20, got, "gradient 1.5 × 20 / 60 = 0.5")
		assert.Equal(t, ReasonLatency, l.reason)
		assert.InDelta(t, 0.5, l.gradient, 1e-9)
	})
	t.Run("a cut at most halves, and never goes under Min", func(t *testing.T) {
		l := New(15, 256, 40)
		l.Next(win(100, 20*ms, 20, 0))
		assert.Equal(t, 20, l.Next(win(100, 10*20*ms, 40, 5)))
		assert.Equal(t, 15, l.Next(win(100, 10*20*ms, 40, 5)))
	})
	t.Run("a stuck slot stops growth and the baselines", func(t *testing.T) {
		l := New(1, 256, 10)
		l.Next(win(50, 20*ms, 0, 0))
		base, best := l.baseline, l.best
		o := win(500, 5*ms, 10, 50)
		o.Stuck = true
		assert.Equal(t, 10, l.Next(o))
		assert.Equal(t, base, l.baseline)
		assert.Equal(t, best, l.best)
	})
	t.Run("a window without a success changes nothing", func(t *testing.T) {
		l := New(1, 256, 10)
		l.Next(win(50, 20*ms, 0, 0))
		before := l
		assert.Equal(t, 10, l.Next(win(0, 0, 10, 1000)))
		assert.Equal(t, before, l)
	})
	t.Run("a breaker that transitioned restarts at half the limit, in slow start", func(t *testing.T) {
		l := New(1, 256, 40)
		l.slowStart = false
		o := win(100, 20*ms, 0, 0)
		o.NewGen = true
		assert.Equal(t, 20, l.Next(o))
		assert.Equal(t, ReasonRestart, l.reason)
		assert.True(t, l.slowStart)
	})
	t.Run("an overload's slow windows do not raise the baseline while faster ones are in its spans", func(t *testing.T) {
		l := New(1, 256, 40)
		l.Next(win(100, 20*ms, 10, 0))
		for range adaptBaselineSpan*adaptBaselineSpans - 1 {
			l.Next(win(160, 45*ms, 40, 9))
		}
		assert.Equal(t, float64(20*ms), l.baseline)
		for range adaptBaselineSpan {
			l.Next(win(160, 45*ms, 40, 9))
		}
		assert.Equal(t, float64(45*ms), l.baseline, "a supplier that stays slower is followed")
	})
	t.Run("a growth that raised latency but not throughput is undone, and the first one probes at a quarter", func(t *testing.T) {
		l := New(1, 256, 20)
		// A cold start into an overloaded supplier: its queue is in the
		// baseline (50 ms), and doubling the limit doubles the latency.
		assert.Equal(t, 40, l.Next(win(40, 50*ms, 20, 9)))
		assert.Equal(t, 5, l.Next(win(40, 100*ms, 40, 9)), "undone to 20, probing at a quarter of it")
		assert.Equal(t, ReasonProbe, l.reason)
		assert.Equal(t, 5, l.Next(win(40, 60*ms, 5, 9)), "the probe's first window drains the queue")
		assert.Equal(t, 20, l.Next(win(40, 25*ms, 5, 9)), "then back")
		assert.Equal(t, float64(25*ms), l.baseline, "with the baseline the probe measured")
		assert.Equal(t, 15, l.Next(win(40, 50*ms, 20, 9)), "which cuts the limit the queue was in: 1.5 × 25 / 50")
		assert.Equal(t, ReasonLatency, l.reason)
	})
	t.Run("a growth the calls did not use is not undone", func(t *testing.T) {
		// A cold start below the supplier's capacity: the limit was in
		// the way once, grew, and the next window's calls fitted in the
		// old limit. Its throughput could not rise (no call was waiting)
		// and its latency is noise: no undo, no probe.
		l := New(1, 256, 20)
		assert.Equal(t, 40, l.Next(win(40, 50*ms, 20, 9)))
		assert.Equal(t, 40, l.Next(win(40, 60*ms, 15, 0)))
		assert.Equal(t, ReasonSlowStart, l.reason)
		assert.Zero(t, l.restore, "no probe")
	})
	t.Run("a growth whose new limit is in the way again is undone, not grown on", func(t *testing.T) {
		// 99 in flight of 110 is in the way (90 %) though under the old
		// 100: latency rose and throughput did not, so the growth is
		// undone, and the first undo probes at a quarter.
		l := New(1, 256, 100)
		l.slowStart = false
		require.Equal(t, 110, l.Next(win(300, 20*ms, 100, 5)))
		assert.Equal(t, 25, l.Next(win(300, 23*ms, 99, 0)))
		assert.Equal(t, ReasonProbe, l.reason)
	})
	t.Run("a probe does not end while a slot is stuck: the limit never grows then", func(t *testing.T) {
		l := New(1, 256, 20)
		l.Next(win(40, 50*ms, 20, 9))
		require.Equal(t, 5, l.Next(win(40, 100*ms, 40, 9)), "probing at a quarter")
		// A partial hang: some slots are held by stuck calls while the
		// others' successes still close windows.
		for range 3 {
			o := win(40, 60*ms, 5, 9)
			o.Stuck = true
			assert.Equal(t, 5, l.Next(o))
		}
		assert.Equal(t, 20, l.Next(win(40, 25*ms, 5, 9)), "back after the first window without a stuck slot")
	})
	t.Run("no probe starts in a window with a stuck slot", func(t *testing.T) {
		// A trickle of hung calls: one slot is always stuck, the others'
		// successes close windows, and busy refusals say the limit is in
		// the way. A probe started now would measure the stall.
		l := New(1, 256, 20)
		l.slowStart = false
		l0 := l.Next(win(200, 20*ms, 20, 9)) // a baseline, no stuck slot
		for range 2 * ProbeBusy {
			o := win(200, 20*ms, l.limit, 9)
			o.Stuck = true
			require.Equal(t, l0, l.Next(o))
		}
	})
	t.Run("a probe held by stuck slots ends after as many windows as the baseline remembers", func(t *testing.T) {
		// A call that keeps its slot for good (a leaked lease is overdue
		// for ever) must not hold the limit at a quarter.
		l := New(1, 256, 20)
		l.Next(win(40, 50*ms, 20, 9))
		require.Equal(t, 5, l.Next(win(40, 100*ms, 40, 9)), "probing at a quarter")
		n := 0
		for l.limit == 5 && n < 2*ProbeBusy {
			o := win(40, 25*ms, 5, 9)
			o.Stuck = true
			l.Next(o)
			n++
		}
		assert.Equal(t, 20, l.limit)
		assert.Equal(t, ProbeBusy, n, "counted from the probe's start")
	})
	t.Run("the limit never exceeds Max", func(t *testing.T) {
		l := New(1, 30, 20)
		assert.Equal(t, 30, l.Next(win(1000, 20*ms, 20, 9)))
	})
}
