package executor

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/bulkhead"
	"github.com/fusebox-go/fusebox/future"
)

// GroupConfig configures a Group: one executor per named dependency.
type GroupConfig struct {
	// Default configures every dependency without an entry in Dependencies.
	Default Config
	// Dependencies override Default per name: each non-zero field of an
	// entry (Breaker's fields one by one) replaces Default's. Use it for a
	// different pool size per dependency.
	Dependencies map[string]Config
	// IdleTimeout evicts an executor that saw no call for this long (it is
	// checked lazily, on lookups; an executor goes between IdleTimeout and
	// twice that after its last call; never while its breaker is not
	// closed). The evicted executor is closed: a caller still holding it
	// gets ErrClosed (SubmitIn and DoIn look the name up again), and the
	// next lookup makes a fresh one. 0 means never: the right choice unless
	// the names are unbounded, such as one per upstream host.
	IdleTimeout time.Duration
	// OnTransition receives the transitions of every executor whose
	// configuration sets no Breaker.OnTransition; Event.Name says whose.
	OnTransition func(breaker.Event)
	// Pool configures the worker pool shared by all the executors.
	Pool bulkhead.PoolConfig
}

// Group holds one executor per named dependency, each created on first
// use, all sharing one worker pool. Idle executors cost memory only, no
// goroutine. It is safe for concurrent use.
type Group struct {
	cfg   GroupConfig
	pool  *bulkhead.Pool
	epoch time.Time // the clock every executor of the group reads

	m         sync.Map // name → *Executor
	mu        sync.Mutex
	closed    bool
	lastSweep atomic.Int64 // ns since epoch
	retired   []*Executor  // evicted, refusing calls, maybe still finishing some
}

// NewGroup validates the default and every per-dependency configuration
// (with the same errors as New) and returns an empty group; nothing runs
// until the first call.
func NewGroup(cfg GroupConfig) (*Group, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	pool, err := bulkhead.NewPool(cfg.Pool)
	if err != nil {
		return nil, err
	}
	return &Group{cfg: cfg, pool: pool, epoch: time.Now()}, nil
}

// Validate reports every problem NewGroup would report, without making a
// group: the default configuration, each dependency's merged one, and the
// group's own settings.
func (cfg GroupConfig) Validate() error {
	var errs []error
	if cfg.IdleTimeout < 0 {
		errs = append(errs, fmt.Errorf("executor: GroupConfig.IdleTimeout must be ≥ 0, got %v", cfg.IdleTimeout))
	}
	if cfg.Pool.Size != 0 {
		errs = append(errs, fmt.Errorf("executor: GroupConfig.Pool.Size must be 0 (unlimited), got %d: "+
			"the bulkheads bound every supplier's concurrency, and a sized pool could refuse a half-open probe", cfg.Pool.Size))
	}
	if _, err := bulkhead.NewPool(bulkhead.PoolConfig{IdleTimeout: cfg.Pool.IdleTimeout}); err != nil {
		errs = append(errs, err) // the other settings, Size apart (checked above)
	}
	if err := cfg.Default.Validate("default"); err != nil {
		errs = append(errs, err)
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Dependencies)) {
		if err := merge(cfg.Default, cfg.Dependencies[name]).Validate(name); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Executor returns the executor of the dependency name, creating it on first
// use. It fails only after Close (ErrClosed).
func (g *Group) Executor(name string) (*Executor, error) {
	if g.cfg.IdleTimeout > 0 {
		g.maybeSweep() // first: never hand out what this sweep evicts
	}
	if v, ok := g.m.Load(name); ok {
		return v.(*Executor), nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil, ErrClosed
	}
	if v, ok := g.m.Load(name); ok {
		return v.(*Executor), nil
	}
	ex, err := newExecutor(name, g.config(name), g.pool, &g.epoch)
	if err != nil {
		return nil, err // validated in NewGroup; only a bug gets here
	}
	g.m.Store(name, ex)
	return ex, nil
}

func (g *Group) config(name string) Config {
	c := g.cfg.Default
	if o, ok := g.cfg.Dependencies[name]; ok {
		c = merge(c, o)
	}
	if c.Breaker.OnTransition == nil {
		c.Breaker.OnTransition = g.cfg.OnTransition
	}
	return c
}

// maybeSweep evicts, at most once per IdleTimeout, the executors that had
// no call in flight, saw no call since the previous sweep (a second-chance
// clock: Submit sets a flag, the sweep clears it) and whose breaker is
// closed (an open breaker remembers a failing supplier: keep it). An
// evicted executor is closed, so that no two live executors ever protect
// one name; SubmitIn and DoIn look again when they meet one.
func (g *Group) maybeSweep() {
	now := int64(time.Since(g.epoch))
	last := g.lastSweep.Load()
	// One clock read and one atomic load on the lookup path; only the
	// caller that wins the CAS sweeps.
	if now-last < int64(g.cfg.IdleTimeout) || !g.lastSweep.CompareAndSwap(last, now) {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return
	}
	// Executors evicted earlier whose last calls have ended are closed
	// for good (an idle Close returns at once).
	g.retired = slices.DeleteFunc(g.retired, func(ex *Executor) bool {
		if ex.active.Load() != 0 {
			return false
		}
		ex.Close(context.Background())
		return true
	})
	g.m.Range(func(k, v any) bool {
		ex := v.(*Executor)
		if ex.active.Load() == 0 && ex.br.State() == breaker.Closed && !ex.used.Swap(false) {
			// Refuse new calls before it leaves the map, so that from here
			// on nobody can start a call on it; a call that raced past the
			// checks above finishes, and the executor is closed for good
			// by a later sweep or by Group.Close.
			ex.evicted.Store(true)
			ex.markClosed()
			g.m.Delete(k)
			g.retired = append(g.retired, ex)
		}
		return true
	})
}

// Range calls f for each executor of the group until f returns false.
func (g *Group) Range(f func(ex *Executor) bool) {
	g.m.Range(func(_, v any) bool { return f(v.(*Executor)) })
}

// Close closes every executor (see Executor.Close) and then the shared
// pool. Executor returns ErrClosed from then on. Like Executor.Close, it
// must not be called from a transition listener, which may run on a
// goroutine that Close waits for.
func (g *Group) Close(ctx context.Context) error {
	g.mu.Lock()
	g.closed = true
	retired := g.retired
	g.retired = nil
	g.mu.Unlock()
	var errs []error
	g.Range(func(ex *Executor) bool {
		if err := ex.Close(ctx); err != nil {
			errs = append(errs, err)
		}
		return true
	})
	for _, ex := range retired {
		if err := ex.Close(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if err := g.pool.Close(ctx); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// merge returns def with every non-zero field of o in its place.
func merge(def, o Config) Config {
	set(&def.Workers, o.Workers)
	set(&def.Queue, o.Queue)
	set(&def.QueueTimeout, o.QueueTimeout)
	set(&def.LowWater, o.LowWater)
	set(&def.InvocationTimeout, o.InvocationTimeout)
	b, ob := &def.Breaker, o.Breaker
	set(&b.Name, ob.Name)
	set(&b.ConsecutiveFailures, ob.ConsecutiveFailures)
	if ob.ErrorKinds != nil {
		b.ErrorKinds = ob.ErrorKinds
	}
	set(&b.FailureRate, ob.FailureRate)
	set(&b.SlowCallRate, ob.SlowCallRate)
	set(&b.SlowCallDuration, ob.SlowCallDuration)
	set(&b.MinimumCalls, ob.MinimumCalls)
	set(&b.WindowSize, ob.WindowSize)
	set(&b.WindowDuration, ob.WindowDuration)
	set(&b.WindowBuckets, ob.WindowBuckets)
	set(&b.ResetTimeout, ob.ResetTimeout)
	set(&b.MaxResetTimeout, ob.MaxResetTimeout)
	set(&b.ResetJitter, ob.ResetJitter)
	set(&b.HalfOpenProbes, ob.HalfOpenProbes)
	if ob.Classify != nil {
		b.Classify = ob.Classify
	}
	if ob.OnTransition != nil {
		b.OnTransition = ob.OnTransition
	}
	mergeStuck(&def.Stuck, o.Stuck)
	if o.OnBusy != nil {
		def.OnBusy = o.OnBusy
	}
	return def
}

func set[V comparable](dst *V, v V) {
	var zero V
	if v != zero {
		*dst = v
	}
}

// SubmitIn submits fn to the executor of the dependency name in g. Unlike a
// lookup followed by Submit, it cannot lose a race with idle eviction: if the
// executor it found was evicted in between, it looks again.
func SubmitIn[T any](ctx context.Context, g *Group, name string, fn func(context.Context) (T, error)) (*future.Future[T], error) {
	for {
		ex, err := g.Executor(name)
		if err != nil {
			return nil, err
		}
		f, err := Submit(ctx, ex, fn)
		if err != nil && ex.evicted.Load() && errors.Is(err, ErrClosed) {
			continue
		}
		return f, err
	}
}

// DoIn is SubmitIn and Await with the same ctx.
func DoIn[T any](ctx context.Context, g *Group, name string, fn func(context.Context) (T, error)) (T, error) {
	f, err := SubmitIn(ctx, g, name, fn)
	if err != nil {
		var zero T
		return zero, err
	}
	return f.Await(ctx)
}
