package shed

import (
	"math"
	"slices"
	"sync"
	"time"

	"github.com/fusebox-go/fusebox/priority"
)

// windows is how many intervals the capacity estimate looks back over,
// and how many intervals without excess demand end an overload.
const windows = 10

// The controller's gains, per interval: how much of the queue above half
// the target is drained (gain), and how much more than the capacity is
// admitted while the run queue is nearly empty (boost).
const (
	gain  = 0.15
	boost = 0.1
)

// control is the sampler's state. Only the sampling goroutine writes it;
// Stats reads the published copy under mu.
type control struct {
	target   time.Duration
	interval time.Duration

	overload    bool                 // from a delay above the target until windows calm intervals
	calm        int                  // intervals in a row without excess demand
	q           float64              // share of the arrivals refused
	above       bool                 // the last interval's delay was above the target
	calmCap     float64              // the capacity when the overload began
	widen       float64              // the brake's caps, over what completes in Target
	busy        [busyWindows]float64 // the busy signal of the last intervals
	nextBusy    int                  // where the next busy signal goes
	brake       bool                 // the in-flight limit is on
	lastStarted float64              // started() at the last tick
	passes      [windows]float64     // completions per interval
	next        int
	capacity    float64 // the last tick's estimate, per interval
	lastLimited float64 // Stats.ByReason[Limit] at the last tick

	// A look between ticks (glance) reads the signals early; the tick
	// then adds what they read (seen) to the rest of the interval.
	seen    readings
	swapped float64 // arrivals the ticks took from the counts
	looks   int     // looks since the last tick
	looked  bool    // a look put the brake on since the last tick

	// A pile's readings: what the looks (and ticks) read since the first
	// look that found requests piling up, while they still are.
	pile pile

	mu    sync.Mutex
	shown Stats // Delay, DropRate, Capacity, Overload
}

func (c *control) init(cfg Config) {
	c.target, c.interval = cfg.Target, cfg.Interval
	c.widen = 1
}

func (c *control) snapshot() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.shown
}

// sample runs until Close: every Interval it reads the run queue's wait
// and updates what Allow reads; between ticks it looks early when Allow
// asks (Shedder.watch) and, while a pile is read (glance), again every
// lookSpan, up to lookMax times an interval and across ticks.
func (s *Shedder) sample() {
	defer close(s.done)
	t := time.NewTicker(s.cfg.Interval)
	defer t.Stop()
	again := time.NewTimer(time.Hour)
	again.Stop()
	defer again.Stop()
	last := time.Now() // the last tick
	mark := last       // the last tick or look
	for {
		select {
		case <-s.stop:
			return
		case <-s.look:
		case <-again.C:
		case <-t.C:
			// In an overload this goroutine waits for a CPU too: a tick can
			// come late, and the next one at once, from the ticker's buffer.
			// A tick too soon after the last is skipped, and the counts of
			// a long one are scaled to an interval.
			el := time.Since(last)
			if el < s.cfg.Interval/2 {
				continue
			}
			last = time.Now()
			wait, busy := s.measure(last.Sub(mark))
			mark = last
			again.Stop()
			s.tick(wait, busy, float64(s.cfg.Interval)/float64(el))
			if s.ctl.pile.on {
				// A pile the looks found goes on being read: Allow asks
				// again only when the requests in flight reach the watch.
				again.Reset(s.lookSpan())
			}
			continue
		}
		if s.ctl.looks >= lookMax {
			continue // the tick reads the rest of the interval
		}
		now := time.Now()
		if span := now.Sub(mark); span < s.lookSpan() {
			// Too short a span to tell a surge from a burst: look once it
			// is long enough.
			again.Reset(s.lookSpan() - span)
			continue
		}
		if s.glance(now.Sub(mark)) {
			again.Reset(s.lookSpan())
		}
		mark = now
	}
}

// lookSpan returns the shortest span a look reads: a lookDiv-th of an
// interval, or half that while a pile is read, whose spans add up.
func (s *Shedder) lookSpan() time.Duration {
	if s.ctl.pile.on {
		return s.cfg.Interval / (2 * lookDiv)
	}
	return s.cfg.Interval / lookDiv
}

// measure reads the signals for the span since the last tick or look,
// and returns them for the whole interval, the looks' included.
func (s *Shedder) measure(span time.Duration) (time.Duration, float64) {
	c := &s.ctl
	w, b := s.read()
	c.pile.add(span, w, b, s.arrived())
	all := c.seen
	all.add(span, w, b)
	busy := all.share()
	if busy < 0 {
		busy = b // the looks' share not known: the tick's own
	}
	c.seen, c.looks = readings{}, 0
	return all.wait, busy
}

// read returns the run queue's wait and the busy share (negative: not
// known) since the last read.
func (s *Shedder) read() (time.Duration, float64) {
	w, busy := s.sig.wait(), -1.0
	if s.sig.busy != nil {
		busy = s.sig.busy()
	}
	return w, busy
}

// started returns the requests handed a Ticket since New: those admitted,
// and in Shadow mode those it would have shed as well, which run all the
// same.
func (s *Shedder) started() float64 {
	n := s.admitted.Load()
	if s.cfg.Shadow {
		for p := range s.shed {
			n += s.shed[p].Load()
		}
	}
	return float64(n)
}

// arrived returns the requests that reached Allow since New.
func (s *Shedder) arrived() float64 {
	n := 0.0
	for p := range s.arrivals {
		n += float64(s.arrivals[p].Load())
	}
	return n + s.ctl.swapped
}

// readings sums the signals read over spans.
type readings struct {
	span time.Duration
	wait time.Duration // the run queue's wait
	busy float64       // busy share times span (ns); negative: not known
}

// add adds a span's readings (busy negative: not known).
func (r *readings) add(span, wait time.Duration, busy float64) {
	r.span += span
	r.wait += wait
	if busy < 0 || r.busy < 0 {
		r.busy = -1
	} else {
		r.busy += busy * float64(span)
	}
}

// share returns the busy share over the spans, negative if not known.
func (r readings) share() float64 {
	if r.busy < 0 || r.span <= 0 {
		return -1
	}
	return r.busy / float64(r.span)
}

// full reports whether the CPUs were busy at least glanceFull (or that is
// not known) with a goroutine waiting for them all along.
func (r readings) full() bool {
	b := r.share()
	return (r.busy < 0 || b >= glanceFull) && r.wait >= r.span
}

// pile sums what was read over the spans since the first look that found
// requests piling up: each 10 ms reading alone is too coarse to tell a
// surge by (the kernel adds a thread's CPU time up at its ticks, and
// requests reach Allow in bunches from the network poller), their sum
// over two or three spans is not.
type pile struct {
	readings
	on   bool
	arr  float64 // arrivals in the spans
	from float64 // arrived() where the last span ended
}

// start begins a pile's readings at a look that found one (its own span
// mostly precedes the pile, so it is left out).
func (p *pile) start(arrived float64) { *p = pile{on: true, from: arrived} }

// add adds a span's readings, if a pile is being read.
func (p *pile) add(span, wait time.Duration, busy, arrived float64) {
	if !p.on {
		return
	}
	p.readings.add(span, wait, busy)
	p.arr += arrived - p.from
	p.from = arrived
}

// The looks between ticks (glance): at most lookMax an interval. A pile
// is judged once its spans add up to a lookDiv-th of an interval; a
// surge is arrivals above what the capacity completes in those spans by
// surgeZ times the Poisson spread of that number, with the CPUs busy at
// least glanceFull. That bar is below 1: the kernel adds a thread's CPU
// time up at its ticks, which leaves a few ms out of a span or puts them
// in the next (10 ms spans read 0.75 to 1.18 around a true 1), and the
// wait for the CPUs all along is the surer sign.
const (
	lookMax    = 8
	lookDiv    = 10
	surgeZ     = 3.0
	glanceFull = 0.75
)

// While the brake is on, it holds as long as more than excess times the
// capacity arrive in an interval, and its caps refused requests, the CPUs
// were full in one of the last busyWindows intervals (or their business
// is not known), or a look put it on in this one.
const excess = 1.25

// widenMax is the most the brake's caps widen beyond what completes in
// Target.
const widenMax = 64

// glance is the look Allow asks for when the requests in flight reach
// twice the brake's default cap outside an overload. The first look that
// finds them there starts reading a pile; the next ones add their spans
// to it and turn the brake on at once if, over the pile's spans, the
// CPUs were full with goroutines waiting for them all along and more
// arrived than the capacity completes, rather than up to an interval
// later, by when a few hundred requests may have piled up. (The first
// look's own span, since the last tick or look, mostly precedes the
// pile.) It reports whether to look again.
func (s *Shedder) glance(span time.Duration) bool {
	c := &s.ctl
	w, busy := s.read()
	c.seen.add(span, w, busy)
	c.looks++
	arrived := s.arrived()
	if n := s.watch.Load(); c.brake || c.capacity <= 0 || n == 0 || s.inflight.Load() < n {
		c.pile.on = false // no pile, or the brake holds it
		return false
	}
	if !c.pile.on {
		c.pile.start(arrived)
		return c.looks < lookMax
	}
	c.pile.add(span, w, busy, arrived)
	if c.pile.span < c.interval/lookDiv {
		return c.looks < lookMax
	}
	switch p := &c.pile; {
	case s.surge():
		s.brakeOn()
		return false
	case !p.full():
		// The CPUs had room: requests in flight that wait on a supplier,
		// not a pile. No more looks until Allow asks again (or a tick
		// finds the CPUs full with requests above the watch).
		p.on = false
		return false
	case p.span > c.interval:
		// Full CPUs and no surge yet: judge the latest interval only.
		p.start(arrived)
	}
	return c.looks < lookMax
}

// surge reports whether the pile's readings show an overload's onset, not
// a burst of an ordinary load.
func (s *Shedder) surge() bool {
	c := &s.ctl
	p := &c.pile
	lambda := c.capacity * float64(p.span) / float64(c.interval)
	return p.full() && p.arr > lambda+surgeZ*math.Sqrt(lambda)
}

// capsFor returns the brake's caps for capacity, the requests completed
// in an interval: as many in flight as complete in Target (capFor),
// times widen.
func (c *control) capsFor(capacity, widen float64) [capSlots]int64 {
	return capFor(widen*capacity*float64(c.target)/float64(c.interval), capacity)
}

// brakeOn turns the in-flight caps on between ticks, at what the last
// capacity estimate completes in Target: what is in flight beyond it
// drains before another default request is admitted. The next tick, which
// sees the whole interval, decides whether to hold the brake.
func (s *Shedder) brakeOn() {
	c := &s.ctl
	c.brake, c.looked = true, true
	caps := c.capsFor(c.capacity, c.widen)
	for i := range caps {
		s.caps[i].Store(caps[i])
	}
	s.watch.Store(0)
}

// full is the share of its CPUs a process must have run or waited for
// (the busy signal), over the last busyWindows intervals, for its run
// queue's delay to count as its own backlog. A process with a backlog
// keeps them at 1; one at 0.8 of its capacity reaches 0.95 in a single
// interval now and then (a burst of arrivals), rarely in three.
const (
	full        = 0.95
	busyWindows = 3
)

// tick is one step of the controller, given the time goroutines spent
// runnable, not running, in the interval that just ended, the share of
// the process's CPUs busy in it (negative: not known), and the ratio of
// Interval to the time since the last tick.
func (s *Shedder) tick(wait time.Duration, busy, scale float64) {
	c := &s.ctl

	// The capacity, as BBR estimates it: the most requests completed in
	// one of the last windows intervals, counting no more than were
	// admitted in it: handlers that share the CPU end a pile together,
	// completing in one interval what the CPUs served over several.
	started := s.started()
	done := float64(s.passes.Swap(0)) * scale // this interval's completions
	c.passes[c.next] = min(done, (started-c.lastStarted)*scale)
	c.next = (c.next + 1) % windows
	capacity := slices.Max(c.passes[:])
	// In an overload the completions are what the shedder admits: the
	// estimate is not let fall below half of what it was when the
	// overload began, or refusals would lower it, and it them, to
	// nothing. (A capacity that truly falls further shows in the delay.)
	if c.overload || c.brake {
		capacity = max(capacity, c.calmCap/2)
	} else {
		c.calmCap = capacity
	}

	var arr [priority.Levels]float64
	total := 0.0
	for p := range arr {
		arr[p] = float64(s.arrivals[p].Swap(0))
		c.swapped += arr[p]
		total += arr[p]
	}
	// The queueing delay per request: the time goroutines spent runnable,
	// waiting for a CPU, over the requests that arrived. Whether the queue
	// forms before the handlers (they never yield) or inside them (they
	// share the CPU), it is the latency the CPU's backlog adds; a handler
	// that waits on a slow supplier adds none. The arrivals, compared
	// with the capacity below, are then counted per interval.
	d := wait / time.Duration(max(total, 1))
	for p := range arr {
		arr[p] *= scale
	}
	total *= scale

	// What to admit next interval: the capacity, less a share of the queue
	// above half the target, or a little more while the run queue is
	// nearly empty: the capacity is then not known to be reached.
	want := capacity
	if d < c.target/4 {
		want *= 1 + boost
	} else {
		want *= 1 - gain*float64(d-c.target/2)/float64(c.interval)
	}
	// At least a quarter of the capacity: completions keep coming to
	// measure it by, and the in-flight limit bounds what they cost.
	want = max(want, capacity/4)

	// Only an overload refuses anything: it starts with a delay above the
	// target, and ends after windows intervals whose arrivals the capacity
	// covered. A service that is not full has no known capacity.
	// Two intervals in a row: a standing queue, not a burst or a moment
	// when another process had the CPU. And only with the process's CPUs
	// full: goroutines of a process with CPU to spare wait because other
	// processes run, not behind its own backlog.
	c.busy[c.nextBusy] = busy
	c.nextBusy = (c.nextBusy + 1) % busyWindows
	mean := 0.0
	for _, b := range c.busy {
		mean += b / busyWindows
	}
	spare := busy >= 0 && mean < full
	above := d > c.target && !spare
	if above && c.above {
		c.overload, c.calm = true, 0
	}
	c.above = above
	if total > want && !spare {
		c.calm = 0
	} else if c.calm++; c.calm >= windows && (d <= c.target || spare) {
		c.overload = false
	}
	q := 0.0
	switch {
	case c.overload && total > 0:
		q = max(0, 1-want/total)
	case c.overload:
		q = c.q // no arrivals to go by
	}
	if d < c.target/4 || spare {
		// No queue, or CPU to spare: whatever the estimate says (it falls
		// with the completions it refused), refuse less and less.
		q = min(q, c.q*0.7)
	}
	limited := float64(s.byReason[Limit].Load())
	binding := c.brake && limited > c.lastLimited // the caps refused some
	c.lastLimited = limited
	if binding && d <= c.target {
		// The brake holds the queue: its caps admit whenever a request in
		// flight ends, and refusing at random as well leaves the CPUs idle
		// between completions (95 % of C against 99 % at 1.5 x C). Not
		// when the caps refuse nothing: with handlers that never yield the
		// queue forms before the shedder, and the queue stage holds it.
		q = 0
	}
	s.binding.Store(binding)
	c.q = q
	// The caps hold what completes in Target in flight only if the
	// requests in flight all want the CPUs: those that also wait on a
	// supplier, or that were admitted together and end together, leave
	// them room. While the caps refuse with the CPUs short of full and no
	// queue, they widen by what the CPUs lacked; a queue narrows them
	// back, and an interval without the brake ends the widening.
	switch {
	case binding && busy >= 0 && busy < full && d <= c.target/2:
		c.widen = min(widenMax, c.widen*min(2, 1/max(busy, 0.5)))
	case !c.brake:
		c.widen = 1
	case d > c.target:
		c.widen = max(1, c.widen*0.8)
	}
	// The brake: while the CPUs are full with a queue, once requests pile
	// up (admitted beyond the completions by more than an interval's
	// capacity in one interval, or more than two intervals' in flight),
	// an in-flight cap per priority (capFor): handlers that share the CPU
	// all slow down together, so what is in flight is what each waits.
	// It comes on in the first such interval, without waiting for the
	// busy signal's mean: after a calm spell the mean lags by intervals in
	// which hundreds pile up, and they take seconds to drain. Once on, it
	// holds until the overload ends or the CPUs had room in each of the
	// last busyWindows intervals: a starved process admits in bursts, and
	// a brake released between them let hundreds pile up. Not for a
	// steady number in flight with CPU to spare: requests that wait on a
	// slow supplier are in flight but need no CPU.
	piling := (started-c.lastStarted)*scale-done > capacity ||
		float64(s.inflight.Load()) > 2*capacity // piled up over several intervals
	c.lastStarted = started
	cpuFull := busy < 0 || busy >= full
	hot := cpuFull && d > c.target/4
	roomy := busy >= 0 && slices.Max(c.busy[:]) < full // room in each of the last intervals
	switch {
	case piling && (c.overload || c.above || hot):
		c.brake = true
	case c.brake && total > excess*capacity && (binding || busy < 0 || slices.Max(c.busy[:]) >= full || c.looked):
		// More arrive than complete, and the caps refused some or the CPUs
		// were full in one of the last intervals: the overload the brake
		// holds off goes on, though the queue it leaves is short and the
		// CPUs may have room between the completions of the requests it
		// lets in (they share the CPU and end together, or wait on a
		// supplier as well). The caps widen to fill that room; a brake let
		// go each time the CPUs read short of full let a pile form each
		// time it came back on.
	case !(c.overload || c.above || hot) || roomy:
		c.brake = false
	}
	c.capacity = capacity
	c.looked = false
	var caps [capSlots]int64
	if c.brake && capacity > 0 {
		// As many in flight as complete in Target (Little's law), so an
		// admitted request waits about that behind the others.
		caps = c.capsFor(capacity, c.widen)
		s.watch.Store(0)
	} else {
		s.watch.Store(2 * c.capsFor(capacity, 1)[priority.Default])
	}
	for i := range caps {
		s.caps[i].Store(caps[i])
	}
	switch n := s.watch.Load(); {
	case c.brake || n == 0 || s.inflight.Load() < n:
		c.pile.on = false
	case hot && !c.pile.on:
		// The CPUs full with requests above the watch, which Allow asks
		// about only as they reach it: read a pile from here.
		c.pile.start(s.arrived())
	}

	// Spread the refusals over the priorities by the mix of the interval
	// that ended: sheddable requests first, then default ones (tenants
	// above their fair share first), then critical ones. The estimate
	// wavers from one interval to the next; critical requests are refused
	// only for a deficit beyond half their own number, so that the
	// wavering falls on the requests that matter less.
	refuse := q * total
	fair := 0.0
	for _, p := range []priority.Priority{priority.Sheddable, priority.Default, priority.Critical} {
		n := arr[p]
		share := 0.0
		switch {
		case total == 0:
			// No arrivals at all to go by: the overall share, critical
			// requests apart.
			if p != priority.Critical {
				share = q
			}
		case refuse <= 0:
		case n == 0:
			// None came last interval: those that come now are refused
			// as the last of the deficit would be, critical ones not.
			if p != priority.Critical {
				share = 1
			}
		case p == priority.Default:
			var byTenant float64
			fair, byTenant = s.tenants.level(min(refuse, n))
			refuse -= byTenant
			n -= byTenant
			if n > 0 && refuse > 0 {
				share = min(1, refuse/n)
				refuse -= share * n
			}
		case p == priority.Critical:
			share = min(1, max(0, refuse-n/2)/n)
		default:
			share = min(1, refuse/n)
			refuse -= share * n
		}
		s.drop[p].Store(probability(share))
	}
	if fair == 0 && c.brake && arr[priority.Default] > 0 {
		// The brake refuses with no deficit to share out (the estimate
		// covers the arrivals): the fair share of what default requests
		// may have beyond the critical ones, for the brake's tenant cap.
		// What default requests may have is what the process completed of
		// late, if less than the estimate: a starved process's estimate is
		// that of its bursts.
		served := 0.0
		for i := 1; i <= busyWindows; i++ {
			served += c.passes[(c.next+windows-i)%windows] / busyWindows
		}
		fair, _ = s.tenants.level(arr[priority.Default] - max(0, min(want, served)-arr[priority.Critical]))
	}
	s.fair.Store(math.Float64bits(fair))

	s.tenants.rotate()

	c.mu.Lock()
	c.shown.Delay, c.shown.DropRate, c.shown.Overload = d, q, c.overload
	c.shown.Capacity = capacity / c.interval.Seconds()
	c.mu.Unlock()
}

// probability returns the threshold below which a uniform uint64 falls
// with probability p.
func probability(p float64) uint64 {
	if p <= 0 {
		return 0
	}
	if p >= 1 {
		return math.MaxUint64
	}
	return uint64(p * (1 << 64))
}
