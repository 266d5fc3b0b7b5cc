package executor

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"

	"github.com/fusebox-go/fusebox/internal/stuck"
	"github.com/fusebox-go/fusebox/internal/timeline"
)

// Reconfigure puts cfg, validated as by New, in force without dropping a
// call or losing the breaker's state; calls in flight keep their slot and
// deadline. After Close it returns ErrClosed. Avoid concurrent
// Reconfigures of one executor (docs/design.md, "Reconfigure").
func (ex *Executor) Reconfigure(cfg Config) error {
	if ex.unmade() {
		return errUnmade
	}
	if g := ex.env.group; g != nil {
		cfg = g.withListeners(cfg)
	}
	r, err := cfg.check(ex.name)
	if err != nil {
		return err
	}
	if ex.isClosed() {
		return fmt.Errorf("executor: %s: Reconfigure: %w", ex.name, ErrClosed)
	}
	ex.apply(r, cfg.OnBusy)
	return nil
}

// check validates cfg whole, as build does, and returns it resolved.
func (c Config) check(name string) (resolved, error) {
	if _, err := c.build(name); err != nil {
		return resolved{}, err
	}
	return c.resolve(name)
}

// apply puts a validated configuration in force.
func (ex *Executor) apply(r resolved, onBusy func(Busy)) {
	// The rules first: a half-open probe must never see the new, smaller
	// bulkhead with the old probe count, and the reset timeout never falls
	// under the new timeouts.
	if err := ex.br.Reconfigure(r.breaker); err != nil {
		panic("executor: a validated breaker configuration failed: " + err.Error()) // not reached
	}
	// The calls listed so far keep their timeouts: the stuck criterion
	// must look as far down the lists as their deadlines reach.
	if int64(r.timeout) < ex.timeout.Load() || int64(r.queueTimeout) < ex.queueTO.Load() {
		now, rc := ex.now(), ex.counts()
		rc.crit.RunSpan.Replaced(ex.timeout.Load()+ex.grace(), now)
		rc.crit.QueueSpan.Replaced(ex.queueTO.Load(), now)
	}
	ex.timeout.Store(int64(r.timeout))
	ex.queueTO.Store(int64(r.queueTimeout))
	ex.shares.Store(r.shares)
	ex.setThrottle(r.throttle)
	// A queue-wait timeline before the queue: a call that Admit queues
	// must find it.
	if r.queue > 0 && ex.queued.Load() == nil {
		ex.queued.CompareAndSwap(nil, &timeline.Lazy{})
	}
	// A window of the adaptive limit may be closing: the resize is ordered
	// with its (see applyAdaptive).
	s := ex.adapt.Load()
	if s != nil {
		s.sizeMu.Lock()
	}
	size, fresh := ex.applyAdaptive(r)
	handed := ex.resize(size, r.queue, r.lowWater)
	if fresh != nil {
		fresh.sizeMu.Unlock()
	}
	if s != nil {
		s.sizeMu.Unlock()
	}
	// The new slots went to the oldest queued calls: start them, as a
	// Release that hands a slot over does.
	for _, w := range handed {
		w.Value.(promoter).promote()
	}
	ex.applyStuck(r.stuck, onBusy)
	if r.shadow || ex.rare.Load() != nil {
		ex.counts().shadow.Store(r.shadow)
	}
}

// applyStuck puts the stuck criterion in force. An executor whose counters
// are not made yet makes them, when they are needed, from its settings of
// that moment (the default criterion); a non-default one or a listener
// makes them now, as New does.
func (ex *Executor) applyStuck(p stuck.Policy, onBusy func(Busy)) {
	rc := ex.rare.Load()
	if rc == nil {
		if p == ex.defaultStuck() && onBusy == nil {
			return
		}
		rc = ex.makeCounts(p, onBusy)
	}
	rc.crit.Put(p, onBusy)
}

// Reconfigure puts cfg, validated as by NewGroup, in force: every executor
// is reconfigured in place, new suppliers get executors, and a Strict
// group closes those cfg drops. The Runner cannot change.
func (g *Group) Reconfigure(cfg GroupConfig) error {
	if err := g.unmade(); err != nil {
		return err
	}
	if err := cfg.validate(); err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return fmt.Errorf("executor: Group.Reconfigure: %w", ErrClosed)
	}
	old := g.conf()
	if cfg.Runner == nil {
		cfg.Runner = old.Runner
	} else if !sameRunner(cfg.Runner, old.Runner) {
		return errors.New("executor: GroupConfig.Runner cannot change in Reconfigure: calls in flight run on the group's Runner; leave it nil to keep it")
	}
	if cfg.OnTransition == nil {
		cfg.OnTransition = old.OnTransition
	}
	g.onTransition.Store(&cfg.OnTransition)
	g.cfg.Store(&cfg)
	g.m.Range(func(k, v any) bool {
		name, ex := k.(string), v.(*Executor)
		if _, listed := cfg.Suppliers[name]; !listed && cfg.Strict {
			g.m.Delete(name)
			ex.evicted.Store(true) // SubmitIn looks again, and meets the refusal
			ex.markClosed()
			g.retired = append(g.retired, ex)
			return true
		}
		c := g.config(name)
		if r, err := c.resolve(name); err == nil && !ex.isClosed() {
			ex.apply(r, c.OnBusy)
		}
		return true
	})
	for _, name := range slices.Sorted(maps.Keys(cfg.Suppliers)) {
		if _, ok := g.m.Load(name); ok {
			continue
		}
		ex, err := newExecutor(name, g.config(name), &g.env)
		if err != nil {
			return err // validated above; only a bug gets here
		}
		g.m.Store(name, ex)
	}
	g.made = g.countMade()
	return nil
}

// sameRunner reports whether a and b are the same Runner, without the panic
// that == raises on runners of an uncomparable type.
func sameRunner(a, b Runner) bool {
	if a == nil || b == nil {
		return a == b
	}
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	return ta == tb && ta.Comparable() && a == b
}
