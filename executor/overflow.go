package executor

import (
	"fmt"
	"hash/maphash"
	"log/slog"
	"strings"
	"time"
)

// defaultMaxSuppliers is the cap of GroupConfig.MaxSuppliers' zero value,
// the default cap on hosts of Envoy's dynamic forward proxy. An idle
// executor costs about 2 KB and, exported, some 90 metric series.
const defaultMaxSuppliers = 1024

// MaxNameLen is the longest supplier name, in bytes.
const MaxNameLen = 256

// overflowShards is the number of overflow executors a group shares out
// the names beyond its cap to.
const overflowShards = 16

// overflowPrefix starts the names of the overflow executors, "(overflow
// 0)" to "(overflow 15)". The parentheses keep them apart from any
// host:port.
const overflowPrefix = "(overflow "

// isOverflow reports whether name is that of an overflow executor.
func isOverflow(name string) bool { return strings.HasPrefix(name, overflowPrefix) }

// shortName returns name, or its first 64 bytes and its length if it is
// longer than MaxNameLen, for errors and logs.
func shortName(name string) string {
	if len(name) <= MaxNameLen {
		return name
	}
	cut := 64
	for cut > 0 && !utf8RuneStart(name[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", name[:cut], len(name))
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

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

// overflowFor returns the overflow executor of a name the group has no
// room for, or that is longer than MaxNameLen, making it if needed (with
// Default's settings; it counts neither toward MaxSuppliers nor as
// listed). Called under g.mu.
//
// Sharing, not refusing: a name beyond the cap is most likely one more of
// a flood of names that the traffic chose, but it may be a new, real
// supplier. Its calls still run, bounded by the bulkhead of one of
// overflowShards executors, chosen by a hash of the name with a seed of
// the group's own; their breakers are Disabled, so that hung names cannot
// open a breaker that every other overflowing name shares: they fill only
// their shard's slots, until their calls time out. A group that must
// refuse unknown names is Strict.
func (g *Group) overflowFor(name string) (*Executor, error) {
	g.noteOverflow(name)
	shard := fmt.Sprintf("%s%d)", overflowPrefix, maphash.String(g.seed, name)%overflowShards)
	if v, ok := g.m.Load(shard); ok {
		return v.(*Executor), nil
	}
	ex, err := newExecutor(shard, g.config(shard), &g.env)
	if err != nil {
		return nil, err // validated in NewGroup; only a bug gets here
	}
	ex.br.Disable()
	g.m.Store(shard, ex)
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
	slog.Default().Warn("executor: a name beyond GroupConfig.MaxSuppliers executors made on first use, or longer than MaxNameLen, shares an overflow executor",
		slog.Int("max_suppliers", g.conf().maxSuppliers()), slog.String("supplier", shortName(o.last)),
		slog.Int("lookups", o.since))
	o.lastAt, o.since = now, 0
}

// countMade counts the executors made on first use that the group holds.
// Called under g.mu.
func (g *Group) countMade() int {
	n := 0
	deps := g.conf().Suppliers
	g.m.Range(func(k, _ any) bool {
		if _, listed := deps[k.(string)]; !listed && !isOverflow(k.(string)) {
			n++
		}
		return true
	})
	return n
}
