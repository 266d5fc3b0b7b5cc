package breaker

// Reconfigure puts the rules of cfg in force for the calls from now on,
// keeping the breaker's state: an open breaker stays open until the same
// moment (a new ResetTimeout applies from its next opening), a half-open
// one keeps its probes, and the generation does not change, so permits
// admitted before the change still count. cfg is validated whole first,
// with the same errors as New; an invalid cfg changes nothing.
//
// Counters that belong to the rules restart when the rules have any (the
// sliding window of the rate rules and the per-kind consecutive counts, in
// a closed or disabled breaker): the old counts were kept for other rules.
// The consecutive-failure count carries over. Results of calls admitted
// before such a restart are counted in Stats.Late and decide nothing, as
// after a transition. A breaker with neither ErrorKinds nor a rate rule,
// before and after, restarts nothing.
//
// cfg.Name and cfg.OnTransition are taken from cfg too: keep them if they
// should not change. Reconfigure is safe for concurrent use with every
// other method; concurrent Reconfigures apply in some order, the last one
// wins.
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
