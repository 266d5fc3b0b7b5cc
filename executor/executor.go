package executor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/bulkhead"
	"github.com/fusebox-go/fusebox/internal/latency"
	"github.com/fusebox-go/fusebox/internal/stuck"
	"github.com/fusebox-go/fusebox/internal/timeline"
	"github.com/fusebox-go/fusebox/priority"
	"github.com/fusebox-go/fusebox/throttle"
)

// Executor protects one supplier: a breaker in front of a bulkhead, an
// invocation timeout, and futures. An idle executor runs nothing. It is
// safe for concurrent use.
type Executor struct {
	env  *env // the clock and the runner (the Group's, shared)
	name string
	// The timeouts, in ns, changed by Reconfigure: a call reads each once,
	// when it enters the queue (queueTO) or starts (timeout). Two words
	// inline rather than a pointer to a settings record, so that an idle
	// executor stays within its footprint.
	timeout atomic.Int64  // invocation timeout
	queueTO atomic.Int64  // queue wait bound; 0 without a queue
	shares  atomic.Uint32 // the critical share in per mille; 0: priorities off (see priority.go)
	br      *breaker.Breaker

	used    atomic.Bool // a call since the Group's last eviction sweep
	evicted atomic.Bool // the Group evicted (and closed) it

	run timeline.Lazy // invocation deadlines of running calls

	// adaptAcc is the adaptive limit's window (adaptState.observe): the
	// count and summed durations of the successes sampled since the window
	// opened; 0 with a fixed bulkhead. It sits next to active and bh so
	// that the sampled add writes the cache line every call writes anyway
	// (TestHotWordsShareACacheLine).
	adaptAcc atomic.Uint64
	// active counts calls from admission until their function has
	// returned (or they left the queue), and holds closedBit once the
	// executor is closed; Close waits for the count to reach 0. The count
	// and the flag share one word so that "no call is active" and "closed"
	// can be decided in one step: Submit counts itself in and learns
	// whether the executor is closed with the same atomic add, and a
	// Group's sweep evicts an idle executor with one CAS from 0, so no call
	// can slip in between the decision and the close.
	active atomic.Int64
	// bh is the bulkhead. Every call writes its state word and active,
	// which sit next to each other so that a call moves one cache line
	// between cores, not two.
	bh bulkhead.Bulkhead

	// queued holds the queue-wait deadlines; nil until the executor has a
	// queue (from New, or from the first Reconfigure that gives it one),
	// and kept after a Reconfigure removes the queue, for the calls still
	// waiting in it.
	queued  atomic.Pointer[timeline.Lazy]
	closing atomic.Pointer[closeState] // set by Close: the executor is closed

	rare  atomic.Pointer[rareCounts] // made at the first rare event
	adapt atomic.Pointer[adaptState] // nil: a fixed bulkhead (Config.Adaptive off)
}

// closedBit is set in active once the executor is closed.
const closedBit = 1 << 62

// markClosed makes the executor refuse new calls (the first step of Close)
// and returns its close state.
func (ex *Executor) markClosed() *closeState {
	ex.closing.CompareAndSwap(nil, &closeState{drained: make(chan struct{})})
	cs := ex.closing.Load()
	// closing is published before the bit, so a call that sees the bit
	// when it leaves also finds cs to signal. A call that left before the
	// bit was set saw nothing to signal: signal for it here.
	if old := ex.active.Or(closedBit); old&^closedBit == 0 {
		cs.signal()
	}
	return cs
}

// evictIfIdle closes the executor if no call is active, in one step with
// respect to Submit, and reports whether it did. evicted is set first: a
// Submit that meets the closed bit must find it, or SubmitIn would hand
// the caller ErrClosed from an open Group instead of looking again. The
// Group's lock orders it with Reconfigure's evictions, so resetting it
// when the executor is busy undoes only this one.
func (ex *Executor) evictIfIdle() bool {
	ex.evicted.Store(true)
	if !ex.active.CompareAndSwap(0, closedBit) {
		ex.evicted.Store(false)
		return false
	}
	ex.markClosed()
	return true
}

// inFlight is the number of calls active.
func (ex *Executor) inFlight() int64 { return ex.active.Load() &^ closedBit }

// closeState is made by Close: drained closes once no call is active.
type closeState struct {
	once    sync.Once
	drained chan struct{}

	mu     sync.Mutex
	timers []<-chan struct{} // each closes once a timer goroutine is gone
}

// keep adds the timer channels one Close found (nil ones are none) to
// those of earlier Closes, and returns them all: a timeline is closed
// once, but every Close waits for its goroutine.
func (cs *closeState) keep(found ...<-chan struct{}) []<-chan struct{} {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for _, g := range found {
		if g != nil {
			cs.timers = append(cs.timers, g)
		}
	}
	return slices.Clone(cs.timers)
}

func (cs *closeState) signal() { cs.once.Do(func() { close(cs.drained) }) }

// isClosed reports whether Close has been called (or a Group evicted it).
func (ex *Executor) isClosed() bool { return ex.active.Load()&closedBit != 0 }

// rareCounts are the counters of the paths a healthy supplier never takes;
// an idle executor (10,000 of them in a Group) does not pay for them.
// Failures and ignored outcomes are counted by the breaker.
type rareCounts struct {
	overdue                     atomic.Int64
	timeouts, panics, cancelled atomic.Uint64
	queueTimeouts               atomic.Uint64
	// Queue hysteresis: calls that left the queue without being served
	// (timed out, cancelled), and that count when the breaker last opened
	// on a full queue. The queue has drained only if it did so by service.
	unserved, unservedAtTrip atomic.Uint64
	// untimed counts the successes not in the duration histogram: calls
	// whose start is not known (see call.startedAt).
	untimed  atomic.Uint64
	rejected [numRejections]atomic.Uint64
	errs     [numRejections]RejectedError
	timeoutErrs
	byPriority [priority.Levels]atomic.Uint64    // rejections of critical and sheddable calls
	crit       stuck.State[func(Busy)]           // the stuck criterion and the latency history
	dur        atomic.Pointer[latency.Durations] // made when the first call ends
	shadowState
	throttle atomic.Pointer[throttle.Throttle] // Config.Throttle's; nil: off
}

// throttled reports whether Config.Throttle refuses a call of ctx now,
// and the time it read (0 without a throttle), for the call's start.
func (ex *Executor) throttled(ctx context.Context) (bool, int64) {
	r := ex.rare.Load()
	if r == nil {
		return false, 0
	}
	th := r.throttle.Load()
	if th == nil {
		return false, 0
	}
	now := ex.now()
	return !th.Admit(now, priority.From(ctx)), now
}

// setThrottle starts the throttle cfg configures, or stops it (nil).
func (ex *Executor) setThrottle(cfg *throttle.Config) {
	if cfg == nil {
		if r := ex.rare.Load(); r != nil {
			r.throttle.Store(nil)
		}
		return
	}
	rc := ex.counts()
	if cur := rc.throttle.Load(); cur != nil && cur.Config() == *cfg {
		return // unchanged: keep what it has counted (a Reconfigure mid-overload)
	}
	th, err := throttle.New(*cfg)
	if err != nil {
		return // validated by resolve: not reached
	}
	rc.throttle.Store(th)
}

func (ex *Executor) counts() *rareCounts {
	if r := ex.rare.Load(); r != nil {
		return r
	}
	return ex.makeCounts(ex.defaultStuck(), nil)
}

// makeCounts makes the executor's rareCounts, unless another goroutine
// just has.
func (ex *Executor) makeCounts(p stuck.Policy, onBusy func(Busy)) *rareCounts {
	r := &rareCounts{}
	r.crit.Put(p, onBusy)
	for i := range r.errs {
		r.errs[i] = RejectedError{Supplier: ex.name, Reason: Rejection(i), br: ex.br}
	}
	r.timeoutErrs.init(ex.name)
	if !ex.rare.CompareAndSwap(nil, r) {
		r = ex.rare.Load()
	}
	return r
}

// New returns an executor for the supplier name, or an error naming every
// invalid field of cfg. It starts no goroutine. For many suppliers, use a
// Group.
func New(name string, cfg Config) (*Executor, error) {
	return newExecutor(name, cfg, &env{epoch: time.Now()})
}

// env is what the executors of a Group share: one allocation, so that an
// idle executor stays small.
type env struct {
	epoch  time.Time // the clock: deadlines are ns since epoch
	runner Runner    // nil: a go statement per call
	// group is the Group of the executors sharing this env; nil for New's.
	// Executor.Reconfigure gives a group's executor the group's listeners.
	group *Group
}

func newExecutor(name string, cfg Config, e *env) (*Executor, error) {
	p, err := cfg.build(name)
	if err != nil {
		return nil, err
	}
	ex := &Executor{env: e, name: name, br: p.br}
	size, fresh := ex.applyAdaptive(p.resolved)
	ex.resize(size, p.queue, p.lowWater)
	if fresh != nil {
		fresh.sizeMu.Unlock()
	}
	ex.timeout.Store(int64(p.timeout))
	ex.queueTO.Store(int64(p.queueTimeout))
	ex.shares.Store(p.shares)
	ex.setThrottle(p.throttle)
	if cfg.Stuck != (StuckConfig{}) || cfg.OnBusy != nil || cfg.Shadow {
		ex.makeCounts(p.stuck, cfg.OnBusy).shadow.Store(cfg.Shadow) // else made with the default criterion when first needed
	}
	if p.queue > 0 {
		ex.queued.Store(&timeline.Lazy{})
	}
	return ex, nil
}

// Name returns the supplier's name ("" for a nil *Executor).
func (ex *Executor) Name() string {
	if ex == nil {
		return ""
	}
	return ex.name
}

// errUnmade is the error of a call to or on a zero Executor, which New
// did not make: it has no bulkhead, breaker or clock to run a call with.
var errUnmade = errors.New("executor: a zero Executor (make one with New or Group.Executor)")

// unmade reports whether ex is nil or a zero Executor (see errUnmade).
func (ex *Executor) unmade() bool { return ex == nil || ex.env == nil }

// Breaker returns the supplier's breaker, for operators and for reading
// its state; nil for a nil or zero Executor.
func (ex *Executor) Breaker() *breaker.Breaker {
	if ex == nil {
		return nil
	}
	return ex.br
}

// reject counts a rejection and returns its error, made once per executor.
// In shadow mode a refusal other than RejectedClosed is counted as
// shadowed instead, and the error is errShadowed: admit runs the call
// outside the bulkhead.
func (ex *Executor) reject(r Rejection) error {
	rc := ex.counts()
	if r != RejectedClosed && rc.shadow.Load() {
		rc.shadowed[r].Add(1)
		return errShadowed
	}
	rc.rejected[r].Add(1)
	return &rc.errs[r]
}

// leave ends one call's membership in active.
func (ex *Executor) leave() {
	if ex.active.Add(-1) == closedBit {
		if cs := ex.closing.Load(); cs != nil {
			cs.signal()
		}
	}
}

// Close refuses new calls with ErrClosed, ends the queued ones and waits
// for the running ones until ctx ends (then they resolve with ErrClosed
// and Close returns ctx's error). It is idempotent.
func (ex *Executor) Close(ctx context.Context) error {
	switch {
	case ctx == nil:
		return errors.New("executor: Close with a nil context (use context.Background())")
	case ex.unmade():
		return errUnmade
	}
	cs := ex.markClosed()
	var qgone <-chan struct{}
	if qt := ex.queued.Load(); qt != nil {
		var left []*timeline.Deadline
		left, qgone = qt.Close()
		for _, d := range left {
			d.Owner.Closed(d.Kind)
		}
	}
	var err error
	select {
	case <-cs.drained:
	case <-ctx.Done():
		err = ctx.Err()
	}
	left, gone := ex.run.Close()
	for _, d := range left {
		d.Owner.Closed(d.Kind)
	}
	// The timers' goroutines may be inside a user's transition listener:
	// wait for them only as long as ctx allows.
	timers := 0
	for _, g := range cs.keep(qgone, gone) {
		select {
		case <-g:
		case <-ctx.Done():
			timers++
		}
	}
	if err == nil && timers > 0 {
		err = ctx.Err()
	}
	if err != nil {
		return &closeError{supplier: ex.name, running: ex.inFlight(), abandoned: len(left), timers: timers, err: err}
	}
	return nil
}

// closeError says what a Close that ran out of time left behind.
type closeError struct {
	supplier  string
	running   int64 // calls whose functions had not returned
	abandoned int   // of those, the ones whose futures Close resolved with ErrClosed
	timers    int   // timelines whose goroutines are still busy (in a classifier or listener)
	err       error
}

func (e *closeError) Error() string {
	msg := fmt.Sprintf("executor: %s: Close gave up with %d calls still running (%d futures resolved with ErrClosed)",
		e.supplier, e.running, e.abandoned)
	if e.timers > 0 {
		msg += ", a classifier or transition listener still running for a timed-out call"
	}
	return msg + ": " + e.err.Error()
}

func (e *closeError) Unwrap() error { return e.err }

// Stats is a snapshot of one supplier. InUse+Free == Slots (but while a
// Reconfigure that shrank the bulkhead waits for calls to end); the
// counters only grow.
type Stats struct {
	Supplier string
	Breaker  breaker.Stats // State, Reason, OpenUntil, Late, ...
	Slots    int           // bulkhead slots
	InUse    int           // slots held, overdue calls included
	Free     int
	Queued   int
	QueueCap int
	Overdue  int // calls past their deadline whose function has not returned yet
	// Calls by outcome (Timeouts and Panics are Failures, Cancelled Ignored).
	Successes, Failures, Ignored uint64
	Timeouts, Panics, Cancelled  uint64
	QueueTimeouts                uint64 // calls that never got a slot in time
	// Rejected counts the calls refused without running, by reason.
	Rejected Rejections
	// RejectedByPriority counts them by priority.Priority.
	RejectedByPriority [priority.Levels]uint64
	// LatencyP50, LatencyP99: of recent successes, within 25 % (0: no history).
	LatencyP50, LatencyP99 time.Duration
	// Durations are histograms by breaker.Outcome, from slot to return.
	Durations [numOutcomes]Histogram
	Shadow    bool       // Config.Shadow
	Shadowed  Rejections // by reason, what Config.Shadow let through
	// With Config.Adaptive on, Slots is the limit in force and the Limit
	// fields say how it got there (docs/adaptive.md).
	Adaptive           bool
	LimitMin, LimitMax int
	LimitReason        string
	LimitBaseline      time.Duration
	LimitGradient      float64
}

// Stats returns a snapshot of the supplier; a nil or zero Executor's is
// zero but for Breaker.State, ForcedOpen.
func (ex *Executor) Stats() Stats {
	if ex.unmade() {
		return Stats{Breaker: ex.Breaker().Stats()} // ForcedOpen: it runs nothing
	}
	bs := ex.bh.Stats()
	s := Stats{
		Supplier: ex.name,
		Breaker:  ex.br.Stats(),
		Slots:    bs.Slots, InUse: bs.InUse, Free: bs.Free, Queued: bs.Queued, QueueCap: bs.QueueCap,
	}
	s.Failures, s.Ignored = s.Breaker.Failures, s.Breaker.Ignored
	var rejected [numRejections]uint64
	rejected[RejectedOpen] = s.Breaker.Rejected // Submit leaves counting those to the breaker (shadowed ones subtracted below)
	s.LatencyP50, s.LatencyP99 = ex.Latency(0.50), ex.Latency(0.99)
	s.Durations = ex.callDurations()
	if rc := ex.rare.Load(); rc != nil {
		s.Successes = rc.successes()
		s.Overdue = int(rc.overdue.Load())
		s.Timeouts, s.Panics, s.Cancelled = rc.timeouts.Load(), rc.panics.Load(), rc.cancelled.Load()
		s.QueueTimeouts = rc.queueTimeouts.Load()
		for i := range rejected {
			rejected[i] += rc.rejected[i].Load() // RejectedOpen here: deferred probes
		}
		rejected[RejectedOpen] -= min(rejected[RejectedOpen], rc.allowShadowed.Load())
		s.Shadow = rc.shadow.Load()
		s.Shadowed = rc.shadowedStats()
	}
	ex.adaptStats(&s)
	s.Rejected = Rejections{
		Open: rejected[RejectedOpen], Saturated: rejected[RejectedSaturated], QueueFull: rejected[RejectedQueueFull],
		Busy: rejected[RejectedBusy], Closed: rejected[RejectedClosed], Throttled: rejected[RejectedThrottled],
	}
	var total uint64
	for _, n := range rejected {
		total += n
	}
	s.RejectedByPriority[priority.Default] = total
	if rc := ex.rare.Load(); rc != nil {
		s.RejectedByPriority = rc.rejectedByPriority(total)
	}
	return s
}

// Rejections counts the calls an executor refused without running them,
// by reason (RejectedError.Reason).
type Rejections struct {
	Open      uint64 // the breaker was open, or a half-open probe found no slot
	Saturated uint64 // no free slot and no queue, the calls stuck: the breaker tripped
	QueueFull uint64 // no free slot and a full queue, the calls stuck: the breaker tripped
	Busy      uint64 // no free slot (nor queue place), the calls young: only this call refused
	Closed    uint64 // the executor was closed
	Throttled uint64 // Config.Throttle refused it locally
}

// Of returns the count of one reason.
func (r Rejections) Of(reason Rejection) uint64 {
	switch reason {
	case RejectedOpen:
		return r.Open
	case RejectedSaturated:
		return r.Saturated
	case RejectedQueueFull:
		return r.QueueFull
	case RejectedBusy:
		return r.Busy
	case RejectedClosed:
		return r.Closed
	case RejectedThrottled:
		return r.Throttled
	}
	return 0
}

// count records an outcome on the breaker (which counts failures and
// ignored outcomes; successes are counted in the duration histogram, see
// ranFor). Classify and the ErrorKinds'
// Match functions are user code: if one panics, the breaker recovers it and
// records a failure, and count returns the panic (counted in Stats.Panics)
// for the call's future. ctx is the caller's, whose priority the
// throttle counts a failure under.
func (ex *Executor) count(ctx context.Context, p breaker.Permit, err error) (breaker.Outcome, *breaker.PanicError) {
	classified, recorded := false, false
	o, cerr := breaker.Success, error(nil)
	defer func() {
		switch {
		case !classified:
			// Classify ended the goroutine (runtime.Goexit): record a
			// failure, as for a panic, so a half-open probe never loses
			// its place. The caller's deferred call resolves the call.
			_ = p.Record(breaker.Failure, nil)
		case !recorded && o == breaker.Success:
			// A transition listener ended it once the breaker had
			// recorded the success: the call never reaches ranFor,
			// which counts successes, so count it here (untimed).
			// Failures and ignored calls are the breaker's own counts.
			ex.counts().untimed.Add(1)
		}
	}()
	if err != nil {
		o, cerr = ex.br.Classify(err)
	}
	classified = true
	if o == breaker.Failure {
		if r := ex.rare.Load(); r != nil {
			if th := r.throttle.Load(); th != nil {
				th.Record(ex.now(), priority.From(ctx), false) // a success costs the throttle nothing
			}
		}
	}
	merr := p.Record(o, err)
	recorded = true
	if cerr == nil {
		cerr = merr
	}
	if cerr != nil {
		ex.counts().panics.Add(1)
		return o, fromBreaker(cerr)
	}
	return o, nil
}

// now reads the executor's monotonic clock.
func (ex *Executor) now() int64 { return int64(time.Since(ex.env.epoch)) }
