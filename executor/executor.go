package executor

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/bulkhead"
)

// Executor protects one supplier: a breaker in front of a bulkhead, an
// invocation timeout, and futures for results. Calls run on a worker pool
// that the executor owns (standalone, started on first use and stopped by
// Close) or shares with the other executors of its Group. An idle executor
// runs nothing: its one timer is armed only while calls are in flight.
// It is safe for concurrent use.
type Executor struct {
	epoch   *time.Time // the clock: deadlines are ns since epoch (the Group's, shared)
	name    string
	timeout time.Duration // invocation timeout
	queueTO time.Duration // queue wait bound; 0 without a queue
	br      *breaker.Breaker
	bh      *bulkhead.Bulkhead
	pool    *bulkhead.Pool
	ownsPl  bool

	used    atomic.Bool // a call since the Group's last eviction sweep
	evicted atomic.Bool // the Group evicted (and closed) it

	run    lazyTimeline  // invocation deadlines of running calls
	queued *lazyTimeline // queue-wait deadlines; nil without a queue

	// active counts calls from admission until their function has
	// returned (or they left the queue); Close waits for it to reach 0.
	// Submit counts itself in before checking for Close, so a Submit that
	// passed the check is always waited for.
	active  atomic.Int64
	closing atomic.Pointer[closeState] // set by Close: the executor is closed

	successes atomic.Uint64
	rare      atomic.Pointer[rareCounts] // made at the first rare event
	lat       atomic.Pointer[latencies]  // made at the first success
	stuck     stuckPolicy
	onBusy    func(Busy)
}

// markClosed makes the executor refuse new calls (the first step of Close)
// and returns its close state.
func (ex *Executor) markClosed() *closeState {
	ex.closing.CompareAndSwap(nil, &closeState{drained: make(chan struct{})})
	cs := ex.closing.Load()
	// A call that left before closing was set saw nothing to signal.
	if ex.active.Load() == 0 {
		cs.signal()
	}
	return cs
}

// closeState is made by Close: drained closes once no call is active.
type closeState struct {
	once    sync.Once
	drained chan struct{}
}

func (cs *closeState) signal() { cs.once.Do(func() { close(cs.drained) }) }

// isClosed reports whether Close has been called.
func (ex *Executor) isClosed() bool { return ex.closing.Load() != nil }

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
	rejected                 [numRejections]atomic.Uint64
	// busyUntil: no call in the bulkhead can be stuck before this time
	// (executor clock), as found by the last busy refusal (see isStuck).
	busyUntil atomic.Int64
	errs      [numRejections]RejectedError
}

func (ex *Executor) counts() *rareCounts {
	if r := ex.rare.Load(); r != nil {
		return r
	}
	r := &rareCounts{}
	for i := range r.errs {
		r.errs[i] = RejectedError{Supplier: ex.name, Reason: Rejection(i)}
	}
	if !ex.rare.CompareAndSwap(nil, r) {
		r = ex.rare.Load()
	}
	return r
}

// New returns a standalone executor for the supplier name, with its own
// worker pool (no goroutine until the first call; after it, the pool keeps
// its housekeeping goroutines until Close). For many suppliers, one per
// upstream host say, use a Group: its executors share one pool. The error names every
// invalid field, including a reset timeout too short to guarantee the
// half-open probe a slot.
func New(name string, cfg Config) (*Executor, error) {
	pool, err := bulkhead.NewPool(bulkhead.PoolConfig{})
	if err != nil {
		return nil, err
	}
	epoch := time.Now()
	ex, err := newExecutor(name, cfg, pool, &epoch)
	if err != nil {
		return nil, err
	}
	ex.ownsPl = true
	return ex, nil
}

func newExecutor(name string, cfg Config, pool *bulkhead.Pool, epoch *time.Time) (*Executor, error) {
	p, err := cfg.build(name)
	if err != nil {
		return nil, err
	}
	ex := &Executor{epoch: epoch, name: name, timeout: p.timeout, queueTO: p.queueTimeout, br: p.br, bh: p.bh, pool: pool,
		stuck: p.stuck, onBusy: cfg.OnBusy}
	if p.queue > 0 {
		ex.queued = &lazyTimeline{}
	}
	return ex, nil
}

// Name returns the supplier's name.
func (ex *Executor) Name() string { return ex.name }

// Breaker returns the supplier's breaker, for operators (Trip, Reset,
// ForceOpen, Disable) and for reading its state.
func (ex *Executor) Breaker() *breaker.Breaker { return ex.br }

// reject counts a rejection and returns its error, made once per executor.
func (ex *Executor) reject(r Rejection) error {
	rc := ex.counts()
	rc.rejected[r].Add(1)
	return &rc.errs[r]
}

// leave ends one call's membership in active.
func (ex *Executor) leave() {
	if ex.active.Add(-1) == 0 {
		if cs := ex.closing.Load(); cs != nil {
			cs.signal()
		}
	}
}

// Close must not be called from a transition listener: listeners may run on
// the executor's timer goroutine, which Close waits for.
//
// Close refuses new calls with ErrClosed, cancels the calls still waiting in
// the queue (their futures resolve with ErrClosed), and waits until the
// running calls have finished or ctx ends. Then it stops the executor's
// timer and, for a standalone executor, its worker pool. If ctx ends first,
// the futures of the calls still running resolve with ErrClosed and Close
// returns ctx.Err(); their functions run on until they return, and a later
// Close waits for them again. Close is idempotent.
func (ex *Executor) Close(ctx context.Context) error {
	cs := ex.markClosed()
	if ex.queued != nil {
		for _, e := range ex.queued.close() {
			e.(queuedCall).dequeue(ErrClosed)
		}
	}
	var err error
	select {
	case <-cs.drained:
	case <-ctx.Done():
		err = ctx.Err()
	}
	for _, e := range ex.run.close() {
		e.(runningCall).abandon()
	}
	if ex.ownsPl {
		if perr := ex.pool.Close(ctx); err == nil {
			err = perr
		}
	}
	return err
}

// queuedCall and runningCall are the views of a call that Close needs.
type queuedCall interface{ dequeue(err error) }
type runningCall interface{ abandon() }

// Stats is a snapshot of one supplier. Slot and queue counts come from one
// atomic word, so Busy+Free == Workers always; the breaker fields from one
// load of its state; the counters are read just after and only grow.
type Stats struct {
	Supplier string
	Breaker  breaker.Stats // State, Reason, OpenUntil, Late, ...

	Workers  int // bulkhead slots
	Busy     int // slots held, overdue calls included
	Free     int
	Queued   int
	QueueCap int
	Overdue  int // calls past their deadline whose function has not returned yet

	// Calls by outcome, as the breaker classified them. Timeouts and
	// panics are failures too (unless a classifier says otherwise);
	// Cancelled counts calls whose caller cancelled (Ignored).
	Successes, Failures, Ignored uint64
	Timeouts, Panics, Cancelled  uint64
	QueueTimeouts                uint64 // calls that never got a slot in time

	Rejected [numRejections]uint64 // by Rejection: Rejected[RejectedOpen], ...

	// LatencyP50 and LatencyP99 are the median and the 99th percentile of
	// the durations of recent successful calls (the last 512 to 1024
	// sampled: every one of the first 256 successes, then one in 8), to
	// within 25 %. 0 without history (fewer than 20 samples).
	LatencyP50, LatencyP99 time.Duration
}

// Stats returns a snapshot of the supplier's state and counters.
func (ex *Executor) Stats() Stats {
	b := ex.bh.Stats()
	s := Stats{
		Supplier: ex.name,
		Breaker:  ex.br.Stats(),
		Workers:  b.Slots, Busy: b.InUse, Free: b.Free, Queued: b.Queued, QueueCap: b.QueueCap,
		Successes: ex.successes.Load(),
	}
	s.Failures, s.Ignored = s.Breaker.Failures, s.Breaker.Ignored
	s.Rejected[RejectedOpen] = s.Breaker.Rejected // Submit leaves counting those to the breaker
	s.LatencyP50, s.LatencyP99 = ex.latencyStats()
	if rc := ex.rare.Load(); rc != nil {
		s.Overdue = int(rc.overdue.Load())
		s.Timeouts, s.Panics, s.Cancelled = rc.timeouts.Load(), rc.panics.Load(), rc.cancelled.Load()
		s.QueueTimeouts = rc.queueTimeouts.Load()
		for i := range s.Rejected {
			s.Rejected[i] += rc.rejected[i].Load() // RejectedOpen here: deferred probes
		}
	}
	return s
}

// count records an outcome on the breaker (which counts failures and
// ignored outcomes) and counts successes.
func (ex *Executor) count(p breaker.Permit, err error) breaker.Outcome {
	o := ex.br.Classify(err)
	p.Record(o, err)
	if o == breaker.Success {
		ex.successes.Add(1)
	}
	return o
}

// now reads the executor's monotonic clock.
func (ex *Executor) now() int64 { return int64(time.Since(*ex.epoch)) }
