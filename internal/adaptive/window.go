package adaptive

import (
	"sync/atomic"
	"time"
)

// The window: it closes at the first counted success after it has lasted
// windowK × the baseline latency (windowKSlow in slow start; within the
// bounds) and seen at least MinSamples sampled successes.
const (
	windowK = 8
	// windowKSlow: slow start asks of a window only whether the limit was
	// in the way at the baseline latency, which a few latencies show; with
	// windowK, a cold start before 80 ms calls doubled only every 0.64 s
	// and served 29 % and 69 % of the best goodput in its first two
	// seconds.
	windowKSlow = 2
	windowMin   = 50 * time.Millisecond
	windowMax   = time.Second
	windowFirst = 100 * time.Millisecond // before there is a baseline
	// MinSamples: sampled calls a window needs, Every × as many successes.
	MinSamples = 16
	// Every: the owner samples one success in Every of each duration
	// bucket, which keeps the window's atomic add off most calls.
	Every     = 4
	tellEvery = time.Second // OnChange at most this often

	// The accumulator packs a window's count (low accCountBits) and the
	// sum of its durations in µs (the rest): one atomic add per sampled
	// call. A call counts at most MaxTimeout (under 2^32 µs), and a window
	// closes early once it holds AccFull calls, so the sum never overflows
	// its 48 bits and the count has AccFull of margin for the calls that
	// end while the window closes.
	accCountBits = 16
	accCountMask = 1<<accCountBits - 1
	// AccFull is the count at which a window closes before its time.
	AccFull = 1 << (accCountBits - 1)
	// MaxTimeout is the longest InvocationTimeout adaptive sizing takes:
	// its windows last a second at most, and a call's duration must fit
	// the accumulator.
	MaxTimeout = time.Hour
)

// Window is the adaptive limit's window over the calls that end, on the
// owner's clock (ns). Its accumulator is the owner's, an atomic.Uint64 it
// may place on a cache line its calls write anyway: Add is the only hot
// path. Due and Close run under the owner's lock, one caller at a time.
type Window struct {
	end       atomic.Int64 // the first success after it closes the window
	start     int64        // when the window opened
	busy, gen uint64       // busy refusals and breaker generation when it opened
	told      int64        // when OnChange was last due
	toldLimit int          // the limit it was told of
	Taken     uint64       // windows closed, for tests
}

// Open opens the first window at now, under breaker generation gen, for a
// limit that starts at limit, and empties acc.
func (w *Window) Open(acc *atomic.Uint64, now int64, gen uint64, limit int) {
	w.start, w.gen, w.toldLimit = now, gen, limit
	w.end.Store(now + int64(windowFirst))
	acc.Store(0) // what a limit before this one left
}

// Add counts a sampled success that took d ≥ 0 ns (at most MaxTimeout of
// it) and ended at now, and reports whether the window is due to close.
func (w *Window) Add(acc *atomic.Uint64, d, now int64) bool {
	us := min(d, int64(MaxTimeout)) / int64(time.Microsecond)
	v := acc.Add(1 | uint64(us)<<accCountBits)
	return now >= w.end.Load() || v&accCountMask >= AccFull
}

// Close closes the window at now if it may (enough samples, and over or
// full), feeding lim what it saw, and reports whether it did. busy and gen
// are the owner's counts of busy refusals and its breaker's generation;
// inUse and stuck describe its bulkhead now. A window in which the
// breaker made a transition is not learned from (lim sees NewGen).
func (w *Window) Close(acc *atomic.Uint64, lim *Limiter, now int64, busy, gen uint64, inUse int, stuck func() bool) bool {
	v := acc.Load()
	if n := v & accCountMask; n < MinSamples || (now < w.end.Load() && n < AccFull) {
		return false
	}
	v = acc.Swap(0)
	n := v & accCountMask
	lim.Next(Obs{
		Dur: time.Duration(now - w.start), N: n * Every,
		Mean:  time.Duration(v>>accCountBits/n) * time.Microsecond,
		Busy:  busy - w.busy,
		InUse: inUse, Stuck: stuck(), NewGen: gen != w.gen,
	})
	w.start, w.busy, w.gen = now, busy, gen
	w.Taken++
	k := float64(windowK)
	if lim.SlowStart() {
		k = windowKSlow
	}
	w.end.Store(now + int64(min(max(time.Duration(k*float64(lim.Baseline())), windowMin), windowMax)))
	return true
}

// Tell reports whether OnChange is due now for a limit changed to to (at
// most once every tellEvery), and the limit it was last told of.
func (w *Window) Tell(now int64, to int) (from int, due bool) {
	if w.told != 0 && now-w.told < int64(tellEvery) {
		return 0, false
	}
	from = w.toldLimit
	w.told, w.toldLimit = now, to
	return from, true
}

// Bounds are the executor's AdaptiveConfig resolved: the limit stays in
// [Min, Max] and starts at Initial; On false means adaptive sizing is off.
type Bounds struct {
	On                bool
	Min, Max, Initial int
}

// Resolve applies the defaults of the executor's AdaptiveConfig (max, min,
// initial; workers is Config.Slots resolved, most the largest size),
// reporting each bad field, by its name in Config, through bad.
func Resolve(maxL, minL, initial, workers, most int, bad func(format string, args ...any)) Bounds {
	if maxL == 0 {
		if minL != 0 || initial != 0 {
			bad("Adaptive.Min and Adaptive.Initial need Adaptive.Max (0: adaptive sizing off), got Min %d, Initial %d", minL, initial)
		}
		return Bounds{}
	}
	switch {
	case maxL < 0 || maxL > most:
		bad("Adaptive.Max must be in [1, %d], or 0 for off, got %d", most, maxL)
		return Bounds{}
	case minL < 0 || minL > maxL:
		bad("Adaptive.Min must be in [0, Adaptive.Max (%d)], got %d", maxL, minL)
		return Bounds{}
	}
	b := Bounds{On: true, Min: max(minL, 1), Max: maxL}
	b.Initial = min(max(workers, b.Min), b.Max)
	if initial != 0 {
		if initial < b.Min || initial > b.Max {
			bad("Adaptive.Initial must be in [Adaptive.Min (%d), Adaptive.Max (%d)], or 0 for Slots, got %d", b.Min, b.Max, initial)
			return Bounds{}
		}
		b.Initial = initial
	}
	return b
}
