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
	// Default configures every supplier without an entry in Dependencies.
	Default Config
	// Dependencies configure the suppliers they name, each with its
	// whole configuration: Default does not apply to them, and a zero
	// field means what it means in Config. To derive one from Default,
	// copy it and change fields (payments := def; payments.Workers = 4).
	// A configuration file writes only the differences instead (package
	// config does the merge).
	Dependencies map[string]Config
	// IdleTimeout evicts an executor that saw no call for this long (it is
	// checked lazily, on lookups; an executor goes between IdleTimeout and
	// twice that after its last call; never while its breaker is not
	// closed, and never for a supplier Dependencies lists). The evicted executor is closed: a caller still holding it
	// gets ErrClosed (SubmitIn and DoIn look the name up again), and the
	// next lookup makes a fresh one. 0 means never: the right choice unless
	// the names are unbounded, such as one per host.
	IdleTimeout time.Duration
	// OnTransition receives the transitions of every executor whose
	// configuration sets no Breaker.OnTransition; Event.Name says whose.
	OnTransition func(breaker.Event)
	// Runner starts the calls of every executor of the group. nil, the
	// recommended setting, starts each call with a go statement of its
	// own. Set it to run the calls on a goroutine pool that the program
	// already runs, under that pool's process-wide cap (see the antspool
	// module); a Runner that refuses a call ends it with its error, one
	// that panics with a *breaker.PanicError.
	Runner Runner
	// Strict refuses names that Dependencies does not list: Executor (and
	// SubmitIn, DoIn, and the transports built on them) return an error
	// matching ErrUnknownDependency, naming the supplier, instead of
	// making an executor with Default's settings. Use it when names come
	// from outside (an admin endpoint, a header, a URL), so that a typo
	// cannot become a phantom supplier in the metrics. false means any
	// name gets an executor. It needs Dependencies.
	Strict bool
	// MaxSuppliers bounds the executors made on first use (names that
	// Dependencies does not list), so that the traffic a group protects
	// cannot grow it without bound when it chooses the names (one per
	// host of user-supplied URLs: webhooks, link previews). Once the group
	// holds that many, every further name, and every name longer than
	// MaxNameLen, shares one of 16 overflow executors, "(overflow 0)" to
	// "(overflow 15)", chosen by a seeded hash of the name, with Default's
	// settings and a Disabled breaker: their calls are bounded by a
	// bulkhead, and hung names cannot open a breaker the others share.
	// Lookup does not find the name; slog.Default logs it at Warn, at most
	// once a minute. Evicting idle executors (IdleTimeout) makes room
	// again. 0 means 1,024; it must not be negative.
	MaxSuppliers int
}

// A Runner starts calls on goroutines it manages. By default fusebox starts
// each admitted call with a go statement of its own: the runtime already
// caches goroutines and sizes their stacks, and the bulkheads bound the
// concurrency of every supplier, so no pool is needed. A Runner is for a
// program that already runs a goroutine pool (an ants pool, say: see the
// antspool module) and wants fusebox's calls under that pool's
// process-wide cap.
//
// Go must run fn on a goroutine other than its caller's, and must not block
// waiting for one. An error means fn will not run; the executor then ends
// the call with that error, as ignored by its breaker (the supplier was
// never asked). A panic in Go counts as a refusal: the executor ends the
// call with a *breaker.PanicError, and so does a Go that ends its goroutine
// (runtime.Goexit: the goroutine, the submitter's or that of the call whose
// end started a queued one, still ends); so Go must do neither after
// starting fn. fn recovers the call's own panics. Go must be safe for
// concurrent use. fn runs the call at most once: a Runner that runs it
// twice, or runs it and also refuses it, has the call settled once, by
// whichever came first.
type Runner interface {
	Go(fn func()) error
}

// ErrUnknownDependency is the error of a lookup, in a Strict group, of a
// name the configuration does not list.
var ErrUnknownDependency = errors.New("executor: unknown supplier")

// Group holds one executor per named supplier. Every supplier that
// GroupConfig.Dependencies lists gets its executor at NewGroup, so that
// metrics and dashboards show it from startup; any other name gets one on
// first use (unless the group is Strict). Idle executors cost memory only,
// no goroutine. It is safe for concurrent use. A nil *Group holds nothing:
// Executor, Reconfigure and Close return an error, Lookup finds nothing,
// Names is empty, and Subscribe subscribes to nothing.
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

// NewGroup validates the default and every per-supplier configuration
// (with the same errors as New) and returns a group holding an idle
// executor for each supplier Dependencies lists; nothing runs until the
// first call.
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
	for name := range cfg.Dependencies {
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
	if cfg.Strict && len(cfg.Dependencies) == 0 {
		errs = append(errs, errors.New("executor: GroupConfig.Strict needs Dependencies: it refuses every name they do not list"))
	}
	if _, err := cfg.Default.build("default"); err != nil {
		errs = append(errs, err)
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Dependencies)) {
		if _, err := cfg.Dependencies[name].build(name); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Executor returns the executor of the supplier name, creating it on first
// use; once the group holds MaxSuppliers executors made so, a new name gets
// the shared overflow executor (see GroupConfig.MaxSuppliers). It fails
// after Close (ErrClosed), and in a Strict group for a name the
// configuration does not list (ErrUnknownDependency). To look a name up
// without ever creating an executor, use Lookup.
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
	if g.made >= g.conf().maxSuppliers() || len(name) > MaxNameLen {
		return g.overflowFor(name)
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
	if o, ok := cfg.Dependencies[name]; ok {
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
		if _, listed := g.conf().Dependencies[k.(string)]; listed {
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
	names := slices.Sorted(maps.Keys(g.conf().Dependencies))
	const shown = 10
	list := strings.Join(names[:min(len(names), shown)], ", ")
	if len(names) > shown {
		list += fmt.Sprintf(", and %d more", len(names)-shown)
	}
	return fmt.Errorf("%w %q: the group is Strict and its configuration lists only %s", ErrUnknownDependency, shortName(name), list)
}

// Lookup returns the executor of the supplier name if the group holds
// one, and never creates one: use it where a name comes from outside and
// must not add a supplier (an admin endpoint that trips or resets a
// breaker). After Close it still finds the closed executors.
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

// Names returns the names of the executors the group holds, sorted: every
// supplier the configuration lists, and the others used so far and not
// evicted. To visit every executor, Lookup each name (one evicted
// meanwhile is not found).
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

// Close closes every executor (see Executor.Close). Executor returns
// ErrClosed from then on. Like Executor.Close, it
// returns by ctx's deadline whatever user code is doing.
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

// SubmitIn submits fn to the executor of the supplier name in g. Unlike a
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
