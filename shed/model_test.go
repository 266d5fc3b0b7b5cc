package shed

import (
	"container/heap"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/fusebox-go/fusebox/priority"
)

// The model is a one-CPU service in virtual time (run under synctest): the
// shedder under test runs its own sampler, fed with the model's
// scheduling delay instead of the runtime's.
//
// In the non-yielding model a request's goroutine runs its handler to the
// end once it has the CPU: the queue forms before the handler, in the run
// queue, and the shedder decides when the request reaches it, after that
// wait. In the yielding model handlers share the CPU (processor sharing):
// admitted requests are in flight together and the queue is inside them.

const step = 500 * time.Microsecond

type phase struct {
	dur  time.Duration
	rate float64       // arrivals per second
	even bool          // arrivals evenly spaced (an open-loop load generator), else Poisson
	work time.Duration // CPU per admitted request
	// wait, if set, returns how long a request waits on a supplier (no
	// CPU) before its work.
	wait func(r *rand.Rand) time.Duration
	// prio and tenant, if set, pick a request's priority and tenant key.
	prio   func(r *rand.Rand) priority.Priority
	tenant func(r *rand.Rand) string
}

type req struct {
	arrive time.Time
	phase  int
	p      priority.Priority
	key    string
	slow   bool
	left   time.Duration // CPU still needed
	ready  time.Time     // end of the supplier wait
	t      Ticket
	shed   bool
}

// tally counts what happened to the requests that arrived in one phase.
type tally struct {
	arrived, shed, good int                     // good: served within the 1 s deadline
	byPrio              [priority.Levels][2]int // arrived, good
	byKey               map[string][2]int       // arrived, good
	fastArrived         int
	fastShed            int
	latencies           []time.Duration // of the good ones
}

// p99 returns the 99th percentile latency of the good requests.
func (t tally) p99() time.Duration {
	if len(t.latencies) == 0 {
		return 0
	}
	l := slices.Clone(t.latencies)
	slices.Sort(l)
	return l[len(l)*99/100]
}

type model struct {
	yielding bool
	shedCost time.Duration // CPU to refuse a request

	mu    sync.Mutex
	steal time.Duration // extra wait per arrival: a host whose other processes take the CPU
	hog   float64       // share of the CPU another process takes
	// Another process that takes the whole CPU for hogFor of every
	// hogEvery (the operating system's slices on a busy host).
	hogEvery, hogFor time.Duration
	// A real server's coarse readings: the kernel adds a thread's times
	// up only every acct (its tick); with bunch, requests reach the
	// shedder at once while the CPU is idle, but while it has goroutines
	// to run only when the runtime's monitor polls the network, every
	// 10 ms (sysmon: the scheduler polls it itself only when it has
	// nothing else to run).
	acct    time.Duration
	bunch   bool
	pend    time.Duration // CPU not yet added up (acct)
	used    time.Duration // CPU the service ran or waited for, since the last busy
	since   time.Time     // the last busy
	arrived int           // arrivals since the last wait
	area    time.Duration // run queue length x time, since the last wait
	queue   []*req        // run queue (non-yielding)
}

// realReadings makes the model's server read the signals as a real one
// does (see acct and bunch): the kernel's tick of 4 ms, and the network
// polled every 10 ms while the CPU is busy.
func (m *model) realReadings() { m.acct, m.bunch = 4*time.Millisecond, true }

// wait is the time requests spent runnable, not running, since the last
// call: the integral of the run queue's length.
func (m *model) wait() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	w := m.area + time.Duration(m.arrived)*m.steal
	m.area, m.arrived = 0, 0
	return w
}

// busy is the share of the CPU the service ran, or waited for while
// another process had it, since the last call.
func (m *model) busy() float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	el := now.Sub(m.since)
	b := float64(m.used) / float64(max(el, 1))
	m.used, m.since = 0, now
	return b
}

func (m *model) signal() signal {
	m.mu.Lock()
	m.since = time.Now()
	m.mu.Unlock()
	return signal{wait: m.wait, busy: m.busy}
}

// run drives s through the phases and returns a tally per phase.
func (m *model) run(s *Shedder, phases []phase) []tally {
	rng := rand.New(rand.NewPCG(1, 2))
	tallies := make([]tally, len(phases))
	for i := range tallies {
		tallies[i].byKey = map[string][2]int{}
	}
	start := time.Now()
	var (
		ends     []time.Duration
		total    time.Duration
		cur      *req          // running, non-yielding
		active   []*req        // in flight and runnable, yielding
		waiting  byReady       // in flight, waiting on a supplier
		overhead time.Duration // CPU owed to refusals
		arriving []*req        // arrived, not yet at the shedder (bunch)
		deliver  time.Duration // when the arriving reach it
	)
	for _, p := range phases {
		total += p.dur
		ends = append(ends, total)
	}
	phaseAt := func(d time.Duration) int {
		for i, e := range ends {
			if d < e {
				return i
			}
		}
		return len(ends) - 1
	}
	next := time.Duration(0)
	finish := func(r *req, now time.Time) {
		r.t.Done()
		tl := &tallies[r.phase]
		if now.Sub(r.arrive) <= time.Second {
			tl.good++
			tl.latencies = append(tl.latencies, now.Sub(r.arrive))
			tl.byPrio[r.p][1]++
			if r.key != "" {
				c := tl.byKey[r.key]
				c[1]++
				tl.byKey[r.key] = c
			}
		}
	}
	admit := func(r *req) bool {
		t, err := s.Allow(r.p, r.key)
		tl := &tallies[r.phase]
		if err != nil {
			r.shed = true
			tl.shed++

			if !r.slow {
				tl.fastShed++
			}
			return false
		}
		r.t = t
		return true
	}
	for {
		time.Sleep(step)
		now := time.Now()
		el := now.Sub(start)
		if el > total {
			break
		}
		// Arrivals up to now.
		for next <= el {
			i := phaseAt(next)
			p := phases[i]
			r := &req{arrive: start.Add(next), phase: i, left: p.work}
			if p.prio != nil {
				r.p = p.prio(rng)
			}
			if p.tenant != nil {
				r.key = p.tenant(rng)
			}
			if p.wait != nil {
				w := p.wait(rng)
				r.ready = r.arrive.Add(w)
				r.slow = w > 100*time.Millisecond
			}
			m.mu.Lock()
			m.arrived++
			m.mu.Unlock()
			tl := &tallies[i]
			tl.arrived++
			tl.byPrio[r.p][0]++
			if r.key != "" {
				c := tl.byKey[r.key]
				c[0]++
				tl.byKey[r.key] = c
			}
			if !r.slow {
				tl.fastArrived++
			}
			if m.yielding {
				arriving = append(arriving, r)
			} else {
				m.mu.Lock()
				m.queue = append(m.queue, r)
				m.mu.Unlock()
			}
			if p.even {
				next += time.Duration(float64(time.Second) / p.rate)
			} else {
				next += time.Duration(rng.ExpFloat64() / p.rate * float64(time.Second))
			}
		}
		if m.yielding && (!m.bunch || el >= deliver || len(active) == 0) {
			for _, r := range arriving {
				if !admit(r) {
					overhead += m.shedCost
				} else if r.ready.After(now) {
					heap.Push(&waiting, r)
				} else {
					active = append(active, r)
				}
			}
			arriving = arriving[:0]
			deliver = el + 10*time.Millisecond
		}
		// Another process takes its share of the step; while the service
		// has work, that time counts as busy (it waits for the CPU).
		hog := time.Duration(m.hog * float64(step))
		if m.hogEvery > 0 && el%m.hogEvery < m.hogFor {
			hog = step
		}
		budget := step - hog
		waited := hog // the service's work waited while the other process ran
		if overhead == 0 && len(active) == 0 && cur == nil && len(m.queue) == 0 {
			waited = 0
		}
		account := func(left time.Duration) {
			m.mu.Lock()
			m.pend += step - hog - left + waited
			if m.acct == 0 || el%m.acct < step {
				m.used, m.pend = m.used+m.pend, 0
			}
			m.mu.Unlock()
		}
		if m.yielding {
			budget, overhead = max(0, budget-overhead), max(0, overhead-budget)
			// Requests whose supplier answered become runnable.
			for len(waiting) > 0 && !waiting[0].ready.After(now) {
				active = append(active, heap.Pop(&waiting).(*req))
			}
			// Processor sharing among the runnable requests; a goroutine
			// waits for the others' slices before each of its own.
			m.mu.Lock()
			m.area += time.Duration(max(0, len(active)-1)) * step
			m.mu.Unlock()
			for budget > 0 && len(active) > 0 {
				share := budget / time.Duration(len(active))
				if share == 0 {
					break
				}
				kept := active[:0]
				for _, r := range active {
					use := min(share, r.left)
					r.left -= use
					budget -= use
					if r.left == 0 {
						finish(r, now)
						continue
					}
					kept = append(kept, r)
				}
				active = kept
			}
			account(budget)
			continue
		}
		// Non-yielding: one request at a time, in arrival order.
		m.mu.Lock()
		m.area += time.Duration(len(m.queue)) * step
		m.mu.Unlock()
		for budget > 0 {
			if cur == nil {
				m.mu.Lock()
				if len(m.queue) == 0 {
					m.mu.Unlock()
					break
				}
				cur = m.queue[0]
				m.queue = m.queue[1:]
				m.mu.Unlock()
				if !admit(cur) {
					cur.left = m.shedCost
				}
			}
			use := min(budget, cur.left)
			cur.left -= use
			budget -= use
			if cur.left == 0 {
				if !cur.shed {
					finish(cur, now)
				}
				cur = nil
			}
		}
		account(budget)
	}
	// Requests still in flight end with the run.
	for _, r := range append(active, waiting...) {
		r.t.Done()
	}
	if cur != nil && !cur.shed {
		cur.t.Done()
	}
	return tallies
}

// byReady is a heap of requests by the end of their supplier wait.
type byReady []*req

func (h byReady) Len() int           { return len(h) }
func (h byReady) Less(i, j int) bool { return h[i].ready.Before(h[j].ready) }
func (h byReady) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *byReady) Push(x any)        { *h = append(*h, x.(*req)) }
func (h *byReady) Pop() any {
	old := *h
	r := old[len(old)-1]
	*h = old[:len(old)-1]
	return r
}
