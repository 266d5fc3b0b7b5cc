package executor

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/future"
)

// GroupConfig configures a Group: one executor per named supplier.
type GroupConfig struct {
	// Default configures every supplier without an entry in Suppliers.
	Default Config
	// Suppliers configure the suppliers they name, instead of Default.
	Suppliers map[string]Config
	// IdleTimeout evicts executors idle this long (not Suppliers). 0: never.
	IdleTimeout time.Duration
	// OnTransition hears every executor whose Breaker sets no OnTransition.
	OnTransition func(breaker.Event)
	// Runner starts the calls; nil, the recommended setting, uses go statements.
	Runner Runner
	// Strict refuses names Suppliers does not list (ErrUnknownSupplier).
	Strict bool
	// MaxSuppliers caps the executors made on first use. 0 means 1,024.
	MaxSuppliers int
}

// A Runner starts calls on goroutines it manages (see the antspool
// module). Go must run fn on another goroutine without blocking, or return
// an error: the call then ends with it. Safe for concurrent use.
type Runner interface {
	Go(fn func()) error
}

// ErrUnknownSupplier: a Strict group does not list the name.
var ErrUnknownSupplier = errors.New("executor: unknown supplier")

// Group holds one executor per supplier, made at NewGroup if listed, else on
// first use; names beyond MaxSuppliers or MaxNameLen share 16 overflow
// executors, breakers disabled. Safe for concurrent use.
type Group struct {
	// cfg is the configuration in force; Reconfigure replaces it (under
	// mu) and lookups load it once.
	cfg atomic.Pointer[GroupConfig]
	env env // the clock every executor of the group reads, and the runner

	m         sync.Map // name → *Executor
	mu        sync.Mutex
	closed    bool
	shut      atomic.Bool  // closed, for the lookup's fast path
	lastSweep atomic.Int64 // ns since epoch
	retired   []*Executor  // evicted, refusing calls, maybe still finishing some
	made      int          // executors made on first use and held (under mu; see MaxSuppliers)
	overflow  overflowLog  // names sent to the overflow executors (under mu)
	seed      maphash.Seed // shares names out to the overflow executors
	subs      subscribers  // Subscribe's listeners, after each executor's own
	// listener is the OnTransition in force followed by the subscribers.
	listener     func(breaker.Event)
	onTransition atomic.Pointer[func(breaker.Event)]
}

// conf returns the configuration in force.
func (g *Group) conf() *GroupConfig { return g.cfg.Load() }

// NewGroup validates cfg (with the errors of New) and returns a group
// holding an idle executor for each supplier cfg.Suppliers lists.
func NewGroup(cfg GroupConfig) (*Group, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	g := &Group{env: env{epoch: time.Now(), runner: cfg.Runner}, seed: maphash.MakeSeed()}
	g.env.group = g
	g.cfg.Store(&cfg)
	g.onTransition.Store(&cfg.OnTransition)
	// One closure for the whole group; the OnTransition in force is read
	// per event, so that Reconfigure can replace it (transition path only).
	g.listener = breaker.Listeners(func(e breaker.Event) {
		if f := *g.onTransition.Load(); f != nil {
			f(e)
		}
	}, g.subs.dispatch)
	for name := range cfg.Suppliers {
		ex, err := newExecutor(name, g.config(name), &g.env)
		if err != nil {
			return nil, err // validated above; only a bug gets here
		}
		g.m.Store(name, ex)
	}
	return g, nil
}

// validate reports every problem of cfg: the default configuration, each
// supplier's, and the group's own settings.
func (cfg GroupConfig) validate() error {
	var errs []error
	if cfg.IdleTimeout < 0 {
		errs = append(errs, fmt.Errorf("executor: GroupConfig.IdleTimeout must be ≥ 0, got %v", cfg.IdleTimeout))
	}
	if cfg.MaxSuppliers < 0 {
		errs = append(errs, fmt.Errorf("executor: GroupConfig.MaxSuppliers must be ≥ 0 (0 means %d), got %d", defaultMaxSuppliers, cfg.MaxSuppliers))
	}
	if cfg.Strict && len(cfg.Suppliers) == 0 {
		errs = append(errs, errors.New("executor: GroupConfig.Strict needs Suppliers: it refuses every name they do not list"))
	}
	if _, err := cfg.Default.build("default"); err != nil {
		errs = append(errs, err)
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Suppliers)) {
		if _, err := cfg.Suppliers[name].build(name); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Executor returns the executor of the supplier name, making it on first
// use (see GroupConfig.MaxSuppliers). It fails after Close (ErrClosed) and
// for a name a Strict group does not list (ErrUnknownSupplier).
func (g *Group) Executor(name string) (*Executor, error) {
	if err := g.unmade(); err != nil {
		return nil, err
	}
	if g.conf().IdleTimeout > 0 {
		g.maybeSweep() // first: never hand out what this sweep evicts
	}
	if v, ok := g.m.Load(name); ok {
		if g.shut.Load() {
			return nil, ErrClosed
		}
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
	if g.conf().Strict {
		// Listed suppliers were all made by NewGroup and are never
		// evicted: a name not found is not listed.
		return nil, g.unknown(name)
	}
	if g.made >= g.conf().maxSuppliers() || len(name) > MaxNameLen || isOverflow(name) {
		return g.overflowFor(name) // a name like an overflow executor's is one of theirs
	}
	ex, err := newExecutor(name, g.config(name), &g.env)
	if err != nil {
		return nil, err // validated in NewGroup; only a bug gets here
	}
	g.m.Store(name, ex)
	g.made++
	return ex, nil
}

// unmade returns an error for a nil Group, or a zero one, which NewGroup
// did not make: it has no configuration to make executors with.
func (g *Group) unmade() error {
	switch {
	case g == nil:
		return errors.New("executor: a nil *Group")
	case g.conf() == nil:
		return errors.New("executor: a zero Group (make one with NewGroup)")
	}
	return nil
}

func (g *Group) config(name string) Config {
	cfg := g.conf()
	c := cfg.Default
	if o, ok := cfg.Suppliers[name]; ok {
		c = o
	}
	return g.withListeners(c)
}

// withListeners makes c's breaker report to the group's listeners (the
// OnTransition in force and the subscribers) after its own, if any.
func (g *Group) withListeners(c Config) Config {
	if c.Breaker.OnTransition == nil {
		// One listener shared by every executor without one of its own:
		// an idle executor must not pay for a closure.
		c.Breaker.OnTransition = g.listener
	} else {
		c.Breaker.OnTransition = breaker.Listeners(c.Breaker.OnTransition, g.subs.dispatch)
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
	now := int64(time.Since(g.env.epoch))
	last := g.lastSweep.Load()
	// One clock read and one atomic load on the lookup path; only the
	// caller that wins the CAS sweeps.
	if now-last < int64(g.conf().IdleTimeout) || !g.lastSweep.CompareAndSwap(last, now) {
		return
	}
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return
	}
	// Executors evicted earlier whose last calls have ended are closed
	// for good, below, outside the lock.
	var ended []*Executor
	g.retired = slices.DeleteFunc(g.retired, func(ex *Executor) bool {
		if ex.inFlight() != 0 {
			return false
		}
		ended = append(ended, ex)
		return true
	})
	g.m.Range(func(k, v any) bool {
		ex := v.(*Executor)
		if _, listed := g.conf().Suppliers[k.(string)]; listed {
			return true // configured suppliers stay, with their series
		}
		// Closing it and finding it idle are one step (a CAS on its
		// count of active calls), so no call can start on it once it is
		// evicted: two live executors never protect one name.
		if ex.br.State() == breaker.Closed && !ex.used.Swap(false) && ex.evictIfIdle() {
			g.m.Delete(k)
			g.retired = append(g.retired, ex)
			if !isOverflow(k.(string)) {
				g.made--
			}
		}
		return true
	})
	g.mu.Unlock()
	if len(ended) > 0 {
		g.closeRetired(ended)
	}
}

// closeRetired closes evicted executors whose calls have all ended,
// without waiting: a timer goroutine of theirs may still be inside a
// user's classifier or transition listener, for as long as that takes. One
// that is keeps its place among the retired, so that Group.Close waits for
// it, as long as its ctx allows.
func (g *Group) closeRetired(ended []*Executor) {
	now, cancel := context.WithCancel(context.Background())
	cancel()
	var busy []*Executor
	for _, ex := range ended {
		if ex.Close(now) != nil {
			busy = append(busy, ex)
		}
	}
	if len(busy) == 0 {
		return
	}
	g.mu.Lock()
	if !g.closed {
		g.retired = append(g.retired, busy...)
	}
	g.mu.Unlock()
}

// unknown is the error of a Strict group's lookup of name.
func (g *Group) unknown(name string) error {
	names := slices.Sorted(maps.Keys(g.conf().Suppliers))
	const shown = 10
	list := strings.Join(names[:min(len(names), shown)], ", ")
	if len(names) > shown {
		list += fmt.Sprintf(", and %d more", len(names)-shown)
	}
	return fmt.Errorf("%w %q: the group is Strict and its configuration lists only %s", ErrUnknownSupplier, shortName(name), list)
}

// Lookup returns the executor of the supplier name if the group holds one;
// it never makes one. After Close it still finds the closed executors.
func (g *Group) Lookup(name string) (*Executor, bool) {
	if g == nil {
		return nil, false
	}
	v, ok := g.m.Load(name)
	if !ok {
		return nil, false
	}
	return v.(*Executor), true
}

// Names returns the names of the executors the group holds, sorted.
func (g *Group) Names() []string {
	if g == nil {
		return nil
	}
	var names []string
	g.m.Range(func(k, _ any) bool {
		names = append(names, k.(string))
		return true
	})
	slices.Sort(names)
	return names
}

// Close closes every executor (Executor.Close) and refuses new names with
// ErrClosed; it returns by ctx's deadline.
func (g *Group) Close(ctx context.Context) error {
	switch {
	case g == nil:
		return g.unmade()
	case ctx == nil:
		return errors.New("executor: Close with a nil context (use context.Background())")
	}
	g.mu.Lock()
	g.closed = true
	g.shut.Store(true)
	retired := g.retired
	g.retired = nil
	g.mu.Unlock()
	var errs []error
	g.m.Range(func(_, v any) bool {
		if err := v.(*Executor).Close(ctx); err != nil {
			errs = append(errs, err)
		}
		return true
	})
	for _, ex := range retired {
		if err := ex.Close(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// SubmitIn submits fn to the executor of the supplier name in g, looking
// the name up again if the executor was evicted meanwhile.
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
