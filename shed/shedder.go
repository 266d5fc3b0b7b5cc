package shed

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/priority"
)

// Config configures a Shedder. The zero value is a working shedder with
// nothing tuned for the machine.
type Config struct {
	// Target is the queueing delay per request that a backlog of CPU
	// work (goroutines runnable, waiting for a CPU) may add before the
	// shedder starts an overload; it then holds the delay near half of it.
	// While requests pile up, about as many stay in flight as complete in
	// Target, more while those leave the CPUs room (they also wait on a
	// supplier). 0 means 20 ms. It is a latency, not a CPU share: it does not
	// depend on the machine.
	Target time.Duration

	// Interval is how often the shedder samples the scheduler and updates
	// its estimates; the capacity is the most requests completed in one of
	// the last 10 intervals. 0 means 100 ms.
	Interval time.Duration

	// RetryAfter is what a shed request is told to wait before it tries
	// again (HTTP Retry-After, rounded up to whole seconds; gRPC pushback).
	// 0 means 1 s.
	RetryAfter time.Duration

	// Tenants is the number of tenant keys the shedder tracks at once when
	// a key is given (Handler's key function, Allow's key): the memory of
	// the fair shares is bounded by it whatever the number of distinct
	// keys. 0 means 128.
	Tenants int

	// Shadow makes the shedder decide and report (Stats, OnShed) but
	// admit every request.
	Shadow bool

	// OnShed, if set, is called on the request's goroutine for every
	// request shed (or, in Shadow mode, that would have been). It must be
	// quick; a panic in it is recovered and counted in Stats.Panics.
	OnShed func(Event)
}

// Event describes one shed request, for Config.OnShed.
type Event struct {
	Priority priority.Priority
	Reason   Reason
	Key      string // the tenant key, "" if none
	Shadow   bool   // the request was served all the same
}

// Reason says why a request was shed.
type Reason uint8

// The reasons of a shed.
const (
	// Queue: in an overload (the run queue's delay per request above
	// Config.Target), the share of arrivals refused to bring it down.
	Queue Reason = iota + 1
	// Limit: while requests piled up with the CPUs full, as many were in
	// flight as the cap of the request's priority (for default requests,
	// at least as many as complete in Config.Target; see Stats.Limit).
	Limit
	// Tenant: the request's tenant sent more than its fair share while
	// the shedder was refusing requests of its priority.
	Tenant
	// Reasons is the number of reasons plus one, for arrays indexed by
	// Reason (index 0 is unused).
	Reasons = iota + 1
)

var reasonNames = [Reasons]string{"", "queue", "limit", "tenant"}

// String returns "queue", "limit" or "tenant", the metrics label of r.
func (r Reason) String() string {
	if r > 0 && r < Reasons {
		return reasonNames[r]
	}
	return fmt.Sprintf("Reason(%d)", r)
}

// ErrShed is the error every refusal matches (errors.Is).
var ErrShed = errors.New("shed: overloaded")

// ShedError is the error Allow returns for a refused request.
type ShedError struct {
	Priority   priority.Priority
	Reason     Reason
	RetryAfter time.Duration // when the client may try again
}

// Error says which request was refused, why, and when to come back.
func (e *ShedError) Error() string {
	return fmt.Sprintf("shed: overloaded, %s request refused (%s); retry after %v", e.Priority, e.Reason, e.RetryAfter)
}

// Unwrap returns ErrShed.
func (e *ShedError) Unwrap() error { return ErrShed }

// Stats is a snapshot of a Shedder's counters and estimates.
type Stats struct {
	Admitted uint64                  // requests admitted (in Shadow mode: every request not shed)
	Shed     [priority.Levels]uint64 // requests shed, by priority (in Shadow mode: would have been)
	ByReason [Reasons]uint64         // requests shed, by Reason
	InFlight int64                   // admitted requests whose Ticket is not done
	Delay    time.Duration           // queueing delay per request in the last interval (see Config.Target)
	DropRate float64                 // share of the arrivals the queue stage refuses, 0 to 1
	Capacity float64                 // the most requests per second completed, over the last 10 intervals
	Limit    int64                   // in flight at which an overload refuses default requests; 0 outside one
	Overload bool                    // from two intervals with Delay above Target, CPUs full, until 10 calm ones
	Shadow   bool                    // Config.Shadow
	Tenants  int                     // tenant keys tracked now (at most Config.Tenants)
	Panics   uint64                  // panics of OnShed recovered
}

// Shedder decides, for each request, whether the process can serve it.
// It is safe for concurrent use. New starts its sampling goroutine; Close
// stops it.
type Shedder struct {
	cfg  Config
	sig  signal        // the run queue's wait and the CPUs' business
	rand func() uint64 // rand.Uint64; the models' tests seed their own

	inflight atomic.Int64
	admitted atomic.Uint64
	shed     [priority.Levels]atomic.Uint64
	byReason [Reasons]atomic.Uint64
	panics   atomic.Uint64
	arrivals [priority.Levels]atomic.Uint64 // this interval, for the priority mix

	// Written by the sampler, read on every request.
	drop [priority.Levels]atomic.Uint64 // refusal probability of each priority, in 2^-64
	fair atomic.Uint64                  // float64 bits: a tenant's fair share per interval, 0 = none
	caps [capSlots]atomic.Int64         // in-flight caps of the brake (capFor), 0 = none
	// binding is set while the caps refused requests in the last
	// interval: the brake holds the queue, and refuses alone.
	binding atomic.Bool
	// watch is the number in flight at which Allow asks the sampler for
	// a look before its next tick (0: none asked): the brake's default
	// cap, twice over, while the brake is off.
	watch atomic.Int64
	look  chan struct{} // Allow's request for that look

	passes atomic.Int64 // requests completed this interval

	tenants *table // nil without keys yet; guarded by its own mutex
	errs    [Reasons][priority.Levels]ShedError

	ctl  control // the sampler's own state
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// New returns a Shedder for cfg and starts its sampling goroutine, which
// reads the scheduler's latencies (runtime/metrics) every Interval. It
// returns an error naming the field for a negative duration or count.
func New(cfg Config) (*Shedder, error) {
	return newShedder(cfg, runtimeSignal())
}

func newShedder(cfg Config, sig signal) (*Shedder, error) {
	switch {
	case cfg.Target < 0:
		return nil, fmt.Errorf("shed: Config.Target is %v, want 0 (20 ms) or more", cfg.Target)
	case cfg.Interval < 0:
		return nil, fmt.Errorf("shed: Config.Interval is %v, want 0 (100 ms) or more", cfg.Interval)
	case cfg.RetryAfter < 0:
		return nil, fmt.Errorf("shed: Config.RetryAfter is %v, want 0 (1 s) or more", cfg.RetryAfter)
	case cfg.Tenants < 0:
		return nil, fmt.Errorf("shed: Config.Tenants is %d, want 0 (128) or more", cfg.Tenants)
	}
	if cfg.Target == 0 {
		cfg.Target = 20 * time.Millisecond
	}
	if cfg.Interval == 0 {
		cfg.Interval = 100 * time.Millisecond
	}
	if cfg.RetryAfter == 0 {
		cfg.RetryAfter = time.Second
	}
	if cfg.Tenants == 0 {
		cfg.Tenants = 128
	}
	s := &Shedder{
		cfg:     cfg,
		sig:     sig,
		rand:    rand.Uint64,
		tenants: newTable(cfg.Tenants),
		look:    make(chan struct{}, 1),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	for r := range s.errs {
		for p := range s.errs[r] {
			s.errs[r][p] = ShedError{Priority: priority.Priority(p), Reason: Reason(r), RetryAfter: cfg.RetryAfter}
		}
	}
	s.ctl.init(cfg)
	go s.sample()
	return s, nil
}

// Close stops the sampling goroutine and waits for it. A closed Shedder
// admits every request. Close is idempotent and returns nil.
func (s *Shedder) Close() error {
	s.once.Do(func() {
		close(s.stop)
		<-s.done
		for p := range s.drop {
			s.drop[p].Store(0)
		}
		for i := range s.caps {
			s.caps[i].Store(0)
		}
	})
	return nil
}

// Ticket is an admitted request. Call Done once when it has been served;
// the zero Ticket's Done does nothing.
type Ticket struct {
	s *Shedder
}

// Done records the end of the request: its completion feeds the capacity
// estimate.
func (t Ticket) Done() {
	if s := t.s; s != nil {
		s.inflight.Add(-1)
		s.passes.Add(1)
	}
}

// Allow decides whether the request of priority p from tenant key (""
// for none) is served. It returns a Ticket to finish with Done, or a
// *ShedError (errors.Is ErrShed) without allocating. The key must come
// from something the server trusts (an authenticated identity), never
// from a value the client chooses freely.
func (s *Shedder) Allow(p priority.Priority, key string) (Ticket, error) {
	if p >= priority.Levels {
		p = priority.Sheddable
	}
	s.arrivals[p].Add(1)
	r := s.decide(p, key)
	if r != 0 {
		s.shed[p].Add(1)
		s.byReason[r].Add(1)
		if s.cfg.OnShed != nil {
			s.report(Event{Priority: p, Reason: r, Key: key, Shadow: s.cfg.Shadow})
		}
		if !s.cfg.Shadow {
			return Ticket{}, &s.errs[r][p]
		}
	} else {
		s.admitted.Add(1)
	}
	if n := s.inflight.Add(1); n == s.watch.Load() {
		select {
		case s.look <- struct{}{}:
		default:
		}
	}
	return Ticket{s: s}, nil
}

// AllowContext is Allow with the priority ctx carries (package priority).
func (s *Shedder) AllowContext(ctx context.Context, key string) (Ticket, error) {
	return s.Allow(priority.From(ctx), key)
}

// decide returns the reason to shed a request, or 0 to admit it.
func (s *Shedder) decide(p priority.Priority, key string) Reason {
	// A tenant's arrivals of the last interval, against the fair share.
	last, fair := 0.0, 0.0
	if key != "" && p == priority.Default {
		last = s.tenants.count(key)
		if f := math.Float64frombits(s.fair.Load()); f > 0 {
			// Counts of one interval vary by about their square root
			// (Poisson): a tenant that sends its share is not singled out
			// for the intervals where it sent a little more.
			fair = f + math.Sqrt(f)
		}
	}
	slot := int(p)
	if fair > 0 && last > 0 && last <= fair {
		slot = withinShare // a tenant that sent its share, and no more
	}
	if c := s.caps[slot].Load(); c > 0 && s.inflight.Load() >= c {
		return Limit
	}
	// While the caps refuse, they alone keep a tenant above its share to
	// what the others leave: a random refusal of it as well would leave
	// the CPUs idle between completions.
	if fair > 0 && last > fair && !s.binding.Load() && s.rand() >= probability(fair/last) {
		return Tenant
	}
	if d := s.drop[p].Load(); d > 0 && s.rand() < d {
		return Queue
	}
	return 0
}

// withinShare is the index in Shedder.caps of a default request whose
// tenant sent no more than its fair share; capSlots is the caps' length.
const (
	withinShare = int(priority.Levels)
	capSlots    = withinShare + 1
)

// capFor returns the in-flight caps of the brake, indexed by priority and
// withinShare, for l, the requests the process completes in Target, and
// perInterval, those it completes in an Interval: sheddable requests are
// refused at half of l, default ones at l, critical ones and those of a
// tenant within its fair share at eight intervals' completions, whatever
// the others hold: a pile-up at the onset drains behind them.
func capFor(l, perInterval float64) [capSlots]int64 {
	var c [capSlots]int64
	c[priority.Default] = int64(max(1, math.Ceil(l)))
	c[priority.Sheddable] = max(1, c[priority.Default]/2)
	c[withinShare] = max(2*c[priority.Default], int64(8*perInterval))
	c[priority.Critical] = c[withinShare]
	return c
}

// report calls OnShed, and recovers and counts a panic in it.
func (s *Shedder) report(e Event) {
	if _, err := breaker.Guard("shed.Config.OnShed", func() (struct{}, error) { s.cfg.OnShed(e); return struct{}{}, nil }, nil); err != nil {
		s.panics.Add(1)
	}
}

// Stats returns a snapshot of the counters and estimates. The counters
// are read one by one, each exact; together they may straddle a request.
func (s *Shedder) Stats() Stats {
	st := Stats{
		Admitted: s.admitted.Load(),
		InFlight: s.inflight.Load(),
		Shadow:   s.cfg.Shadow,
		Tenants:  s.tenants.len(),
		Panics:   s.panics.Load(),
		Limit:    s.caps[priority.Default].Load(),
	}
	for p := range st.Shed {
		st.Shed[p] = s.shed[p].Load()
	}
	for r := range st.ByReason {
		st.ByReason[r] = s.byReason[r].Load()
	}
	c := s.ctl.snapshot()
	st.Delay, st.DropRate, st.Capacity, st.Overload = c.Delay, c.DropRate, c.Capacity, c.Overload
	return st
}
