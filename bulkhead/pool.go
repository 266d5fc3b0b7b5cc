package bulkhead

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/ants/v2"
)

var (
	// ErrPoolClosed is returned by [Pool.Go] after [Pool.Close].
	ErrPoolClosed = errors.New("bulkhead: pool closed")

	// ErrPoolOverload is returned by [Pool.Go] when a sized pool has no idle
	// worker and may start no more. It is a condition of the whole shared
	// pool, not of one supplier: it is deliberately not [ErrFull], so it
	// never reads as one supplier's saturation. An unlimited pool (Size 0)
	// never returns it.
	ErrPoolOverload = errors.New("bulkhead: pool overloaded")

	errNilTask = errors.New("bulkhead: Go with a nil Task")
)

// A Task is work run by a [Pool]. Run must not panic: recover inside Run and
// turn the panic into a result (the executor does). A panic that escapes
// reaches [PoolConfig.PanicHandler] as a last resort.
type Task interface {
	Run()
}

// PoolConfig sets up a [Pool]. It is plain data; the zero value is an
// unlimited pool with a one-second idle timeout that logs escaped panics.
type PoolConfig struct {
	// Size caps the number of worker goroutines. 0 means unlimited, which
	// is the recommended setting: the bulkheads already bound concurrency
	// per supplier, and an unlimited pool never blocks or rejects a task
	// (so it never refuses a half-open probe). With Size > 0, Go returns
	// ErrPoolOverload instead of waiting when every worker is busy. It
	// must not be negative.
	Size int

	// IdleTimeout is how long an idle worker goroutine lives before it
	// exits. 0 means one second (ants' default). It must not be negative.
	IdleTimeout time.Duration

	// PanicHandler receives the value of a panic that escaped a Task's Run,
	// on the worker goroutine; the worker then exits and the pool carries
	// on. It is a last resort only: a Task must not panic. nil means the
	// panic and its stack are logged to standard error and swallowed.
	PanicHandler func(any)
}

// A Pool runs Tasks on recycled worker goroutines (an ants.PoolWithFunc).
// One Pool is shared by many bulkheads; the bulkheads bound how many tasks
// each supplier runs, the Pool only supplies goroutines.
//
// NewPool starts nothing. The ants pool, with its worker goroutines and its
// two housekeeping goroutines, exists only from the first Go until Close:
// an idle, never-used Pool costs no goroutine. A Pool first used inside a
// testing/synctest bubble must be used and closed inside that bubble.
//
// All methods are safe for concurrent use. Close must not be called from a
// Task of the same pool, which would wait for itself.
type Pool struct {
	cfg PoolConfig

	// mu makes Close and Go exclusive: Go holds it shared while it checks
	// closed and hands the task to ants, and Close takes it exclusively to
	// set closed. Once Close has it, no Go is between its check and ants,
	// so no worker can start after ants is released (ants itself checks
	// its state before, not atomically with, starting a worker).
	mu     sync.RWMutex
	closed bool

	ants    atomic.Pointer[ants.PoolWithFunc] // nil until the first Go
	startMu sync.Mutex                        // serializes the lazy start

	stopOnce sync.Once
	stopped  chan struct{} // closed once ants and all its goroutines are gone
}

// NewPool returns a Pool configured by cfg, or an error naming the invalid
// field. It starts no goroutine.
func NewPool(cfg PoolConfig) (*Pool, error) {
	switch {
	case cfg.Size < 0:
		return nil, fmt.Errorf("bulkhead: PoolConfig.Size must be ≥ 0, got %d", cfg.Size)
	case cfg.Size > maxSize:
		return nil, fmt.Errorf("bulkhead: PoolConfig.Size must be ≤ %d, got %d", maxSize, cfg.Size)
	case cfg.IdleTimeout < 0:
		return nil, fmt.Errorf("bulkhead: PoolConfig.IdleTimeout must be ≥ 0, got %v", cfg.IdleTimeout)
	}
	return &Pool{cfg: cfg}, nil
}

// runTask is the one function every ants worker runs. ants passes the Task
// as an interface value, so a pointer Task costs no allocation per call.
func runTask(arg any) { arg.(Task).Run() }

// Go runs t.Run on a worker goroutine. It never blocks waiting for a worker:
// an unlimited pool starts one if none is idle; a sized pool returns
// [ErrPoolOverload]. It returns [ErrPoolClosed] after Close, and an error if
// t is nil. Go allocates nothing once the pool has idle workers.
func (p *Pool) Go(t Task) error {
	if t == nil {
		// ants treats a nil argument as "worker, exit".
		return errNilTask
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		return ErrPoolClosed
	}
	ap := p.ants.Load()
	if ap == nil {
		var err error
		if ap, err = p.start(); err != nil {
			return err
		}
	}
	switch err := ap.Invoke(t); {
	case err == nil:
		return nil
	case errors.Is(err, ants.ErrPoolOverload):
		return ErrPoolOverload
	case errors.Is(err, ants.ErrPoolClosed):
		return ErrPoolClosed
	default:
		return fmt.Errorf("bulkhead: pool: %w", err)
	}
}

// start creates the ants pool on the first Go. The caller holds p.mu shared,
// so Close cannot run meanwhile.
func (p *Pool) start() (*ants.PoolWithFunc, error) {
	p.startMu.Lock()
	defer p.startMu.Unlock()
	if ap := p.ants.Load(); ap != nil {
		return ap, nil // another Go started it first
	}
	ap, err := ants.NewPoolWithFunc(p.cfg.Size, runTask,
		ants.WithExpiryDuration(p.cfg.IdleTimeout), // 0: ants' default
		ants.WithPanicHandler(p.cfg.PanicHandler),  // nil: ants logs
		// A sized pool refuses at once instead of parking the submitter.
		// Unlimited pools never reach that check.
		ants.WithNonblocking(true),
	)
	if err != nil {
		return nil, fmt.Errorf("bulkhead: pool: %w", err)
	}
	p.ants.Store(ap)
	return ap, nil
}

// Close refuses new tasks and waits until every worker goroutine and ants'
// housekeeping goroutines have exited, or until ctx is done, in which case
// it returns ctx.Err() and the pool keeps shutting down on its own as the
// running tasks end. Close is idempotent: a later Close waits again for the
// same shutdown. Close of a pool that never ran a task returns nil at once.
func (p *Pool) Close(ctx context.Context) error {
	p.mu.Lock()
	p.closed = true
	ap := p.ants.Load()
	p.mu.Unlock()
	if ap == nil {
		return nil // never started, and closed now, so it never will
	}
	p.stopOnce.Do(func() {
		p.stopped = make(chan struct{})
		// ReleaseContext can be called only once per ants pool and gives
		// up on its own context, so one goroutine waits for the end with a
		// context that never ends, and every Close waits on that. It has
		// an owner and an end: it exits when the last worker does.
		go func() {
			// It waits for the workers and for the purge and ticktock
			// goroutines to report done. Its error can only be "already
			// closed", impossible here: nobody else releases ap.
			_ = ap.ReleaseContext(context.Background())
			close(p.stopped)
		}()
	})
	select {
	case <-p.stopped:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
