package fleet

import (
	"context"
	"fmt"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
)

// Operator actions for the whole fleet. ForceOpen, Disable and Reset on a
// Link act on this replica's breaker at once and then on every replica's:
// the action is numbered by Redis (one counter per prefix), stored in the
// supplier's override key (a Reset stays there too, as the newest action)
// and published. A replica applies an action only if it is newer than the
// newest it knows for the supplier, so that two operators acting at once
// end with the same breaker everywhere. A replica that starts or
// reconnects later reads the override keys; one that has no executor for
// the supplier yet applies it when the group makes one. If Redis lost the
// keys (restarted empty), each replica writes back the newest action it
// knows, and the counter never goes below it.
//
// The breaker's own ForceOpen, Disable and Reset stay local, as before.

// The kinds of operator action on the wire.
const (
	kindForceOpen = "force-open"
	kindDisable   = "disable"
	kindReset     = "reset"
)

// Override is the newest fleet-wide operator action this replica knows
// for a supplier.
type Override struct {
	// Action is "force-open", "disable" or "reset".
	Action string
	// Reason is the operator's, as given to the action.
	Reason string
	// Replica is the replica the action was taken on.
	Replica string
	// Seq numbers the fleet's actions; the highest wins.
	Seq int64
	// Applied reports whether this replica's breaker carries the action
	// (false while the group has no executor for the supplier).
	Applied bool
}

// ForceOpen refuses every call to supplier on every replica until a
// Reset, with no probes, for reason (an operator's words, for logs and
// the fleet's view; at most 64 printable bytes). A supplier name the wire
// cannot carry (over 256 bytes, not UTF-8, with a control character) is
// refused with an error, and nothing changes. This replica's breaker is
// forced open before ForceOpen returns, whatever Redis says; the error
// reports that the fleet could not be told (the link is down, or Redis
// refused), and the operator may try again.
func (l *Link) ForceOpen(ctx context.Context, supplier, reason string) error {
	if err := l.usable(ctx, "ForceOpen"); err != nil {
		return err
	}
	return l.act(ctx, supplier, kindForceOpen, reason)
}

// Disable admits every call to supplier on every replica until a Reset
// (see ForceOpen for reason and the error).
func (l *Link) Disable(ctx context.Context, supplier, reason string) error {
	if err := l.usable(ctx, "Disable"); err != nil {
		return err
	}
	return l.act(ctx, supplier, kindDisable, reason)
}

// Reset closes supplier's breaker on every replica, with fresh counters,
// ending a ForceOpen or Disable (see ForceOpen for reason and the error).
func (l *Link) Reset(ctx context.Context, supplier, reason string) error {
	if err := l.usable(ctx, "Reset"); err != nil {
		return err
	}
	return l.act(ctx, supplier, kindReset, reason)
}

// Control carries out a dashboard's operator action (see
// dashboard.Options.Control) on every replica: "force-open", "disable" and
// "reset" as ForceOpen, Disable and Reset, with reason "dashboard" when the
// operator gave none; "trip" trips this replica's breaker (reason Manual),
// which the fleet hears as any trip.
func (l *Link) Control(ctx context.Context, supplier, action, reason string) error {
	if err := l.usable(ctx, "Control"); err != nil {
		return err
	}
	if reason == "" {
		reason = "dashboard"
	}
	switch action {
	case kindForceOpen, kindDisable, kindReset:
		return l.act(ctx, supplier, action, reason)
	case "trip":
		ex, err := l.g.Executor(supplier)
		if err != nil {
			return fmt.Errorf("fleet: trip %q: %w", supplier, err)
		}
		ex.Breaker().Trip(breaker.Manual)
		return nil
	}
	return fmt.Errorf("fleet: action must be trip, force-open, disable or reset, got %q", action)
}

// Overrides returns the newest fleet-wide action per supplier that this
// replica knows.
func (l *Link) Overrides() map[string]Override {
	l.omu.Lock()
	defer l.omu.Unlock()
	out := make(map[string]Override, len(l.overrides))
	for name, o := range l.overrides {
		out[name] = o
	}
	return out
}

// act carries out one operator action here, then tells the fleet.
func (l *Link) act(ctx context.Context, supplier, kind, reason string) error {
	// Every other replica would drop the action as malformed: refuse it
	// here, before it makes an executor or reaches Redis.
	if why := supplierFault(supplier); why != "" {
		return fmt.Errorf("fleet: %s %q: the supplier name cannot go on the wire (%s): every other replica would refuse it", kind, supplier, why)
	}
	if !validReason(reason) {
		return fmt.Errorf("fleet: the reason must be at most %d bytes of valid UTF-8 without control characters, got %q", maxReasonLen, reason)
	}
	ex, err := l.g.Executor(supplier) // a Strict group refuses names it does not list
	if err != nil {
		return fmt.Errorf("fleet: %s %q: %w", kind, supplier, err)
	}
	l.overrideBreaker(ex.Breaker(), supplier, kind)
	if !l.isUp() {
		return fmt.Errorf("fleet: %s %q applied on this replica only: the link to Redis is down", kind, supplier)
	}
	ctx, cancel := context.WithTimeout(ctx, l.cfg.OpTimeout)
	defer cancel()
	m := message{V: wireVersion, Replica: l.cfg.Replica, Supplier: supplier, Kind: kind, Reason: reason}
	seq, err := l.be.act(ctx, supplier, kind == kindReset, func(seq int64) []byte { m.Seq = seq; return l.seal(m) })
	if err == nil && (seq < 1 || seq > maxSeq) {
		err = fmt.Errorf("the fleet's counter gave %d, outside [1, %d]", seq, maxSeq)
	}
	if err != nil {
		return fmt.Errorf("fleet: %s %q applied on this replica only: %w", kind, supplier, err)
	}
	m.Seq = seq
	l.counterMu.Lock()
	key := l.counterKey(supplier)
	l.counters[key] = max(l.counters[key], seq)
	l.counterMu.Unlock()
	if l.know(m, true) {
		l.enforce(ex.Breaker(), supplier) // an older action may have arrived meanwhile
	}
	return nil
}

// enforce gives name's breaker the newest known action. Two goroutines
// (an operator's call and the applier) may apply two actions at once: each
// looks again after applying and applies the newest if it changed, so the
// last to apply applies the newest.
func (l *Link) enforce(b *breaker.Breaker, name string) {
	for range 8 {
		l.omu.Lock()
		o := l.overrides[name]
		l.omu.Unlock()
		l.overrideBreaker(b, name, o.Action)
		l.omu.Lock()
		same := l.overrides[name].Seq == o.Seq
		l.omu.Unlock()
		if same {
			return
		}
	}
}

// overrideBreaker applies an action to this replica's breaker. The
// transitions it causes are the fleet's doing, so the link does not
// publish them as trips or closes of this replica.
func (l *Link) overrideBreaker(b *breaker.Breaker, name, kind string) {
	l.overriding.Store(&name)
	defer l.overriding.Store(nil)
	switch kind {
	case kindForceOpen:
		b.ForceOpen()
	case kindDisable:
		b.Disable()
	default:
		b.Reset()
	}
}

// know records an action as the newest for its supplier, unless a newer
// one is known; it reports whether it did. An action of a supplier without
// an executor here (applied false) waits in the table, which holds at most
// Buffer of them: when it is full the lowest-numbered one makes room, unless
// it is the newcomer.
func (l *Link) know(m message, applied bool) bool {
	l.omu.Lock()
	defer l.omu.Unlock()
	o, ok := l.overrides[m.Supplier]
	if ok && o.Seq >= m.Seq {
		return false
	}
	if !applied && !ok && len(l.waiting) >= l.cfg.Buffer {
		var low string
		for name := range l.waiting {
			if low == "" || l.overrides[name].Seq < l.overrides[low].Seq {
				low = name
			}
		}
		if l.overrides[low].Seq >= m.Seq {
			l.n.overflow.Add(1)
			return false
		}
		delete(l.waiting, low)
		delete(l.overrides, low)
		l.n.overflow.Add(1)
	}
	if applied {
		delete(l.waiting, m.Supplier)
	} else {
		l.waiting[m.Supplier] = struct{}{}
	}
	l.overrides[m.Supplier] = Override{Action: m.Kind, Reason: m.Reason, Replica: m.Replica, Seq: m.Seq, Applied: applied}
	return true
}

// vouch reports whether the fleet's counter in Redis has numbered an
// action as high as m.Seq: every operator action is numbered by it before
// it is stored or published, so one above it was taken by no operator.
// limit is the counter as read with the action (a catch-up), or 0 for a
// message from the channel: then the counter last read is asked first, and
// Redis only for a number above it.
func (l *Link) vouch(m message, limit int64) bool {
	if limit > 0 {
		return m.Seq <= limit
	}
	key := l.counterKey(m.Supplier)
	l.counterMu.Lock()
	known := l.counters[key]
	l.counterMu.Unlock()
	if m.Seq <= known {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), l.cfg.OpTimeout)
	defer cancel()
	key, n, err := l.be.counter(ctx, m.Supplier)
	if err != nil {
		return false // unverifiable now: the next catch-up reads it with the counter
	}
	l.counterMu.Lock()
	l.counters[key] = max(l.counters[key], n)
	l.counterMu.Unlock()
	return m.Seq <= n
}

// counterKey names the counter that numbers name's actions, for the cache
// of counters read.
func (l *Link) counterKey(name string) string {
	switch b := l.be.(type) {
	case *clusterBackend:
		return b.lane(name).seq
	case *redisBackend:
		return b.seq
	}
	return "" // the test hub's one counter
}

// applyOverride hands a received action to the supplier's breaker, if it
// is the newest this replica knows and the fleet's counter vouches for it;
// without an executor it waits in overrides (Applied false) for
// overridesDue, unless the group is Strict and does not list the supplier.
func (l *Link) applyOverride(m message, limit int64) outcome {
	ex, ok := l.g.Lookup(m.Supplier)
	if !ok && l.gcfg.Strict {
		if _, listed := l.gcfg.Suppliers[m.Supplier]; !listed {
			return stale // never stored: the group will never make it
		}
	}
	if m.Seq <= l.known(m.Supplier) {
		return stale
	}
	if !l.vouch(m, limit) {
		l.n.refused.Add(1)
		return refused
	}
	if !l.know(m, ok) {
		return stale
	}
	if !ok {
		l.poke("") // the scheduler polls while an action waits
		return deferred
	}
	l.applying.Store(&m.Supplier)
	l.enforce(ex.Breaker(), m.Supplier)
	l.applying.Store(nil)
	l.poke(m.Supplier)
	return applied
}

// overridesDue applies, on the scheduler's goroutine, the known actions
// whose executor the group has made since, and reports whether any still
// wait. It looks at the waiting ones only (at most Buffer).
func (l *Link) overridesDue() bool {
	l.omu.Lock()
	var due []string
	for name := range l.waiting {
		if l.has(name) {
			due = append(due, name)
			o := l.overrides[name]
			o.Applied = true
			l.overrides[name] = o
			delete(l.waiting, name)
		}
	}
	waiting := len(l.waiting) > 0
	l.omu.Unlock()
	for _, name := range due {
		if ex, ok := l.g.Lookup(name); ok {
			l.enforce(ex.Breaker(), name)
			l.n.applied.Add(1)
		}
	}
	return waiting
}

// catchUpOverrides reads the fleet's actions at the start of a session
// (the applier applies them, as it does messages), and writes back those
// Redis no longer has (it restarted empty) or has older.
func (l *Link) catchUpOverrides(ctx context.Context, wait *patience) error {
	stored, err := l.be.overrides(ctx, l.cfg.OpTimeout, l.wanted())
	if err != nil {
		return err
	}
	have := map[string]int64{}
	read := time.Now()
	for _, k := range stored {
		if k.bad != nil {
			l.malformed(k.bad)
			continue
		}
		if m, err := l.open(k.payload); err == nil {
			have[m.Supplier] = m.Seq
		}
		l.receive(k.payload, read, 0, k.limit, wait)
	}
	for name, o := range l.Overrides() {
		if have[name] >= o.Seq {
			continue
		}
		m := message{V: wireVersion, Replica: o.Replica, Supplier: name, Kind: o.Action, Reason: o.Reason, Seq: o.Seq}
		rctx, cancel := context.WithTimeout(ctx, l.cfg.OpTimeout)
		_ = l.be.restore(rctx, name, o.Seq, l.seal(m)) // else the next catch-up tries again
		cancel()
	}
	return nil
}

// known is the sequence number of the newest action known for name.
func (l *Link) known(name string) int64 {
	l.omu.Lock()
	defer l.omu.Unlock()
	return l.overrides[name].Seq
}

func isOverride(kind string) bool {
	return kind == kindForceOpen || kind == kindDisable || kind == kindReset
}
