package executor

import (
	"log/slog"
	"time"
)

// defaultMaxSuppliers is the cap of GroupConfig.MaxSuppliers' zero value.
// An idle executor costs about 2 KB with its metrics series: 10,000 of
// them are about 20 MB.
const defaultMaxSuppliers = 10_000

// overflowName names the executor that the names beyond MaxSuppliers
// share. The parentheses keep it apart from any host:port.
const overflowName = "(overflow)"

// overflowEvery is the shortest time between two messages about names
// sent to the overflow executor.
const overflowEvery = time.Minute

func (cfg *GroupConfig) maxSuppliers() int {
	if cfg.MaxSuppliers == 0 {
		return defaultMaxSuppliers
	}
	return cfg.MaxSuppliers
}

// overflowLog counts the names sent to the overflow executor between two
// messages.
type overflowLog struct {
	since  int    // lookups sent there since the last message
	lastAt int64  // when it was logged (group clock); 0: never
	last   string // the latest name sent
}

// overflowFor returns the overflow executor, for a name the group has no
// room for, making it if needed (with Default's settings; it counts
// neither toward MaxSuppliers nor as listed). Called under g.mu.
//
// Sharing, not refusing: a name beyond the cap is most likely one more of
// a flood of names that the traffic chose, but it may be a new, real
// supplier; its calls still run, bounded by the overflow's bulkhead and
// protected by its breaker, while the flood cannot take more than that
// bulkhead's slots. A group that must refuse unknown names is Strict.
func (g *Group) overflowFor(name string) (*Executor, error) {
	g.noteOverflow(name)
	if v, ok := g.m.Load(overflowName); ok {
		return v.(*Executor), nil
	}
	ex, err := newExecutor(overflowName, g.config(overflowName), &g.env)
	if err != nil {
		return nil, err // validated in NewGroup; only a bug gets here
	}
	g.m.Store(overflowName, ex)
	return ex, nil
}

// noteOverflow counts name as sent to the overflow executor and logs, at
// most once per overflowEvery, how many were. Called under g.mu.
func (g *Group) noteOverflow(name string) {
	o := &g.overflow
	o.since++
	o.last = name
	now := int64(time.Since(g.env.epoch)) + 1 // never 0
	if o.lastAt != 0 && now-o.lastAt < int64(overflowEvery) {
		return
	}
	slog.Default().Warn("executor: the group holds GroupConfig.MaxSuppliers executors made on first use; further names share the overflow executor",
		slog.Int("max_suppliers", g.conf().maxSuppliers()), slog.String("supplier", o.last),
		slog.Int("lookups", o.since), slog.String("executor", overflowName))
	o.lastAt, o.since = now, 0
}

// countMade counts the executors made on first use that the group holds.
// Called under g.mu.
func (g *Group) countMade() int {
	n := 0
	deps := g.conf().Dependencies
	g.m.Range(func(k, _ any) bool {
		if _, listed := deps[k.(string)]; !listed && k != overflowName {
			n++
		}
		return true
	})
	return n
}
