package breaker

// Listeners returns one transition listener, for Config.OnTransition (or a
// Group's), that hands every event to each of ls in order: logs, metrics
// and a hook of your own, without a fan-out written by hand. nil entries
// are skipped. A listener that panics is recovered and logged like a lone
// listener, and the ones after it still get the event. With no non-nil
// listener it returns nil: no events.
func Listeners(ls ...func(Event)) func(Event) {
	var all []func(Event)
	for _, l := range ls {
		if l != nil {
			all = append(all, l)
		}
	}
	switch len(all) {
	case 0:
		return nil
	case 1:
		return all[0]
	}
	return func(e Event) {
		for _, l := range all {
			deliver(l, e)
		}
	}
}
