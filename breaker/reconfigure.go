package breaker

// Reconfigure puts the rules of cfg, validated as by New, in force for the
// calls from now on, keeping the state: an open breaker stays open until
// the same moment, a half-open one keeps its probes, and the generation
// does not change. Rule counters (the sliding window, per-kind counts)
// restart when the rules have any; results admitted before count only in
// Stats.Late. The consecutive-failure count carries over. Name and
// OnTransition are taken from cfg too. Safe for concurrent use; of
// concurrent Reconfigures the last one wins.
func (b *Breaker) Reconfigure(cfg Config) error {
	if b.unmade() {
		return errUnmade
	}
	next, err := compile(cfg)
	if err != nil {
		return err
	}
	old := b.rs.Swap(&next)
	if !old.opt.counting() && !next.opt.counting() {
		return nil
	}
	// The counters of a closed period have the shape of the rules that
	// made them (one per kind, a window of their size). Give the current
	// closed record fresh ones, made from the new rules, in a copy of it:
	// like moveUntil, this is not a transition (same generation, no event).
	for {
		cur := b.cur.Load()
		if cur.state != Closed && cur.state != Disabled {
			return nil // counters come with the next closed record, from the new rules
		}
		cp := &record{gen: cur.gen, state: cur.state, from: cur.from, reason: cur.reason,
			kind: cur.kind, attempts: cur.attempts, at: cur.at, until: cur.until}
		cp.consec.Store(cur.consec.Load())
		b.closedRecord(cp)
		if b.cur.CompareAndSwap(cur, cp) {
			return nil
		}
	}
}
