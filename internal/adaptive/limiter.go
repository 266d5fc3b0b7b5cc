// Package adaptive is the algorithm of the executor's adaptive limit (see
// docs/adaptive.md): a Limiter, fed one window's observations at a time,
// returns the next limit. It reads no clock and touches no bulkhead, so it
// can be driven deterministically; the executor feeds it from the calls
// that end and resizes its bulkhead to the limit.
package adaptive

import (
	"math"
	"time"
)

const (
	// adaptTolerance: latency up to this multiple of the baseline is no
	// sign of a queue at the supplier.
	adaptTolerance = 1.5
	// adaptMinGradient bounds one cut: the limit at least halves.
	adaptMinGradient = 0.5
	// adaptHeadroom is the limit allowed over the Little's-law need
	// (best recent throughput × baseline latency), for bursts.
	adaptHeadroom = 2.0
	// The baseline is the lowest window mean of the last
	// adaptBaselineSpans × adaptBaselineSpan windows (some 10 s at 20 ms
	// calls): a low quantile of the recent windows. An overload that the
	// limit lets build a queue at the supplier never becomes the norm, as
	// the windows after each cut see the queue drained; a supplier that
	// really got slower is followed once the faster windows are out of it.
	adaptBaselineSpans = 8
	adaptBaselineSpan  = 8
	// adaptBestDecay: the best recent throughput forgets this fraction a
	// window, so a supplier that scaled down is followed in some 30.
	adaptBestDecay = 1.0 / 32
	// A growth that raised latency by adaptNoGainLatency but throughput
	// by no more than adaptNoGainX is undone.
	adaptNoGainX       = 1.02
	adaptNoGainLatency = 1.1
	// adaptProbeEvery: windows between two probes.
	adaptProbeEvery = 256
	// ProbeBusy: windows between two probes while the limit is in the way,
	// about as many as the baseline remembers: under a sustained overload
	// every window sees the supplier's queue, and a baseline of queued
	// windows only would rise with the limit, which then never cuts.
	ProbeBusy = adaptBaselineSpans * adaptBaselineSpan
	// adaptProbeWindows: a probe's windows; the first drains the queue.
	adaptProbeWindows = 2
	// adaptFull: a window that ends with at least this fraction of the
	// limit in use had the limit in its way.
	adaptFull = 0.9
)

// Why the limit last changed (the executor's Stats.LimitReason).
const (
	ReasonInitial   = "initial"    // the configured Initial, or a Reconfigure
	ReasonSlowStart = "slow start" // doubled: the limit was in the way and latency is at its baseline
	ReasonGrow      = "grow"       // grown by √L: the limit was in the way
	ReasonLatency   = "latency"    // cut: latency rose over the baseline while throughput did not
	ReasonRestart   = "restart"    // halved: the breaker closed again after a trip
	ReasonNoGain    = "no gain"    // undone: the last growth raised latency, not throughput
	ReasonProbe     = "probe"      // a quarter for two windows, to measure the latency without a queue
)

// Obs is what one window saw. Only successful calls admitted under the
// breaker's current generation that beat their deadline count in N and
// Mean: the rule of the latency history (docs/design.md).
type Obs struct {
	Dur    time.Duration // the window's length
	N      uint64        // successes that count
	Mean   time.Duration // their mean duration
	Busy   uint64        // busy refusals in the window
	InUse  int           // slots in use when it ended
	Stuck  bool          // a slot held by a call older than the stuck threshold, or overdue
	NewGen bool          // the breaker made a transition since the last window
}

// Limiter is the algorithm's state. Not safe for concurrent use: its
// owner holds a mutex around it.
type Limiter struct {
	min, max  int
	limit     int
	slowStart bool
	baseline  float64                     // ns: the lowest window mean of the recent spans
	spans     [adaptBaselineSpans]float64 // the lowest mean of each span of windows, 0: none
	span      int                         // the span being filled
	inSpan    int                         // windows in it so far
	best      float64                     // calls per ns: the best recent throughput, decaying
	gradient  float64                     // of the last window: tolerance × baseline / mean, clamped to [0.5, 1]
	reason    string
	// The last window's throughput and mean latency, and the limit before
	// it grew (0: it did not grow).
	prevX, prevMean float64
	grewFrom        int
	// windows counts the windows; probedAt is the window of the last
	// probe, restore the limit to go back to after it (0: none running).
	windows, probedAt uint64
	restore           int
}

// New returns a Limiter at initial, in slow start, bounded by [minL, maxL].
func New(minL, maxL, initial int) Limiter {
	return Limiter{min: minL, max: maxL, limit: initial, slowStart: true, gradient: 1, reason: ReasonInitial}
}

// Limit returns the current limit.
func (l *Limiter) Limit() int { return l.limit }

// Reason returns why the limit last changed, one of the Reason constants.
func (l *Limiter) Reason() string { return l.reason }

// Baseline returns the baseline latency (0: none yet).
func (l *Limiter) Baseline() time.Duration { return time.Duration(l.baseline) }

// Gradient returns the last window's gradient, in [0.5, 1].
func (l *Limiter) Gradient() float64 { return l.gradient }

// SlowStart reports whether the limit is in slow start.
func (l *Limiter) SlowStart() bool { return l.slowStart }

// Bounds returns the limit's bounds.
func (l *Limiter) Bounds() (minL, maxL int) { return l.min, l.max }

// SetBounds sets the limit's bounds and clamps the limit into them.
func (l *Limiter) SetBounds(minL, maxL int) {
	l.min, l.max = minL, maxL
	l.limit = min(max(l.limit, l.min), l.max)
}

// SetLimit sets the limit, clamped to the bounds, keeping the reason.
func (l *Limiter) SetLimit(n int) { l.limit = min(max(n, l.min), l.max) }

// need is the Little's-law concurrency: best recent throughput × baseline.
func (l *Limiter) need() float64 { return l.best * l.baseline }

// Next takes one window's observations and returns the new limit.
//
// The rules, in order: a breaker that transitioned restarts at half the
// limit, in slow start; a window without a success that counts changes
// nothing (a hang freezes the limit and the baselines); a probe runs its
// course; a growth in the last window that raised latency but not
// throughput is undone (and may start a probe); latency over the
// tolerated multiple of the baseline while throughput did not rise cuts
// the limit by the gradient, where the cut binds; a limit that was in the
// way (busy refusals, or nearly all of it in use) grows, doubling in slow
// start, by √L after, never past the headroom over the Little's-law need
// and never while a slot is stuck.
func (l *Limiter) Next(o Obs) int {
	if o.NewGen {
		l.set(max(l.min, l.limit/2), ReasonRestart)
		l.slowStart = true
		return l.limit
	}
	if o.N == 0 || o.Dur <= 0 {
		return l.limit
	}
	mean := float64(max(o.Mean, time.Microsecond))
	x := float64(o.N) / float64(o.Dur)
	prevBest, from := l.best, l.limit
	if l.windows++; !o.Stuck {
		l.learn(mean, x)
	}
	probed := l.probing(o.Stuck)
	if !probed {
		l.gradient = min(max(adaptTolerance*l.baseline/mean, adaptMinGradient), 1)
		l.decide(o, x, mean, prevBest)
	}
	l.prevX, l.prevMean, l.grewFrom = x, mean, 0
	if l.limit > from && !probed { // the end of a probe is no growth
		l.grewFrom = from
	}
	return l.limit
}

// probing runs a probe's windows, and reports whether one ran: its first
// window lets the supplier's queue drain, after its last the limit goes
// back to where it was, but not while a slot is stuck (the limit never
// grows then): the probe goes on until a window without one, or for
// ProbeBusy windows at most. A stall that long that has not tripped
// the breaker is no hang filling the bulkhead, but a call that keeps its
// slot (a leaked lease is overdue for good), and must not hold the limit
// at a quarter.
func (l *Limiter) probing(stuck bool) bool {
	ran := l.windows - l.probedAt
	switch {
	case l.restore == 0:
		return false
	case ran >= adaptProbeWindows && (!stuck || ran >= ProbeBusy):
		l.set(max(l.min, min(l.restore, l.max)), ReasonNoGain)
		l.restore = 0
	}
	return true
}

// decide applies the rules that move the limit after a window.
func (l *Limiter) decide(o Obs, x, mean, prevBest float64) {
	inTheWay := o.Busy > 0 || float64(o.InUse) >= adaptFull*float64(l.limit)
	cut := int(float64(l.limit) * l.gradient)
	switch {
	case l.noGain(o, x, mean, inTheWay):
		// The supplier is saturated: the last growth only queued calls
		// at it. A baseline learned under overload (a cold start into
		// it) cannot tell; this can.
		l.slowStart = false
		l.set(max(l.min, l.grewFrom), ReasonNoGain)
		if l.probeAfterUndo(o.Stuck) {
			l.probe()
		}
	case l.probeDue(inTheWay) && !o.Stuck: // a probe measures the supplier, not a stall
		l.probe()
	case l.gradient < 1 && x <= prevBest*1.1 && (inTheWay || o.InUse > cut):
		// A cut that would bind: latency that rises while the calls in
		// flight are far below the limit is not the limit's queue.
		l.slowStart = false
		l.set(max(l.min, cut), ReasonLatency)
	case !o.Stuck && inTheWay:
		l.grow()
	}
}

// noGain reports whether the last window's growth raised latency but not
// throughput, and the calls used it. Only a growth the calls used can
// have queued them, judged by the window's end: the new limit in the way
// again, or more in flight than the old one. Under a demand below the
// supplier's capacity a growth gains no throughput either, since no call
// was waiting for it, and such a window's latency is mostly noise. (A
// point sample: a window that ends in a lull keeps a growth it used; the
// periodic probe and the latency cut still apply.)
func (l *Limiter) noGain(o Obs, x, mean float64, inTheWay bool) bool {
	return l.grewFrom > 0 && x <= l.prevX*adaptNoGainX && mean >= l.prevMean*adaptNoGainLatency &&
		(inTheWay || o.InUse > l.grewFrom)
}

// probeAfterUndo reports whether an undone growth starts a probe: the
// first one does, then at most one every adaptProbeEvery windows, and none
// in a window with a stuck slot (a probe measures the supplier, not a
// stall).
func (l *Limiter) probeAfterUndo(stuck bool) bool {
	return (l.windows-l.probedAt >= adaptProbeEvery || l.probedAt == 0) && !stuck
}

// probeDue reports whether a limit in the way is due a probe
// (ProbeBusy): not in slow start, which has no queue to learn from.
func (l *Limiter) probeDue(inTheWay bool) bool {
	return inTheWay && !l.slowStart && l.windows-l.probedAt >= ProbeBusy
}

// probe runs two windows at a quarter of the limit, where the supplier's
// queue drains, for a baseline of its own latency; then the limit goes
// back to where it was, judged by that baseline.
func (l *Limiter) probe() {
	l.probedAt, l.restore = l.windows, l.limit
	l.set(max(l.min, l.limit/4), ReasonProbe)
}

// learn updates the baselines from a window that saw no stuck slot.
func (l *Limiter) learn(mean, x float64) {
	if l.inSpan == adaptBaselineSpan {
		l.span, l.inSpan = (l.span+1)%adaptBaselineSpans, 0
		l.spans[l.span] = 0
	}
	l.inSpan++
	if s := &l.spans[l.span]; *s == 0 || mean < *s {
		*s = mean
	}
	l.baseline = 0
	for _, s := range l.spans {
		if s > 0 && (l.baseline == 0 || s < l.baseline) {
			l.baseline = s
		}
	}
	l.best = max(x, l.best*(1-adaptBestDecay))
}

// grow raises a limit that was in the way, within the headroom.
func (l *Limiter) grow() {
	want, why := l.limit+max(1, int(math.Sqrt(float64(l.limit)))), ReasonGrow
	if l.slowStart {
		want, why = l.limit*2, ReasonSlowStart
	}
	if c := int(math.Ceil(adaptHeadroom*l.need())) + 1; want > c {
		want = max(c, l.limit) // slow start goes on: a cold start's first windows underrate the need
	}
	if want = min(want, l.max); want > l.limit {
		l.set(want, why)
	}
}

func (l *Limiter) set(n int, why string) {
	if n != l.limit {
		l.limit, l.reason = n, why
	}
}
