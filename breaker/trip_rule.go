package breaker

// Counts are what the trip rules of a closed breaker look at, as
// Config.ReadyToTrip gets them after each recorded success or failure (the
// call just recorded included). Under concurrent calls the counts are read
// without a lock, so one of them may be a call apart from the others.
type Counts struct {
	// ConsecutiveFailures counts the failures in a row that matched no
	// ErrorKinds rule (as Stats.ConsecutiveFailures); a success clears it.
	ConsecutiveFailures int
	// Calls, Failures and SlowCalls are the sliding window's totals: its
	// calls, those that failed, and those that lasted SlowCallDuration or
	// longer (0 without SlowCallDuration).
	Calls, Failures, SlowCalls int
	// FailureRate and SlowCallRate are Failures/Calls and SlowCalls/Calls,
	// computed as float64 (as the built-in rate rules compare them); 0
	// while the window is empty.
	FailureRate, SlowCallRate float64
}

// custom reports whether a ReadyToTrip rule is set.
func (o *optRule) custom() bool { return o != nil && o.readyToTrip != nil }

// windowReason returns the first rule over the window of the closed record
// r that fires at now: a rate rule, then ReadyToTrip. The error is a
// *PanicError if ReadyToTrip panicked.
func (b *Breaker) windowReason(r *record, now int64) (Reason, error) {
	o := b.rules().opt
	if o == nil {
		return noReason, nil // the window's rules were removed by a Reconfigure
	}
	calls, failures, slow := r.extra.win.counts(now)
	if reason := o.rateReason(calls, failures, slow); reason != noReason || o.readyToTrip == nil {
		return reason, nil
	}
	c := Counts{
		ConsecutiveFailures: int(r.consec.Load()),
		Calls:               int(calls),
		Failures:            int(failures),
		SlowCalls:           int(slow),
	}
	if calls > 0 {
		c.FailureRate = float64(failures) / float64(calls)
		c.SlowCallRate = float64(slow) / float64(calls)
	}
	if trip, perr := readyToTrip(o.readyToTrip, c); !trip {
		return noReason, perr
	}
	return ReadyToTrip, nil
}

// readyToTrip asks the user's rule. A panic means "do not trip": tripping
// on a bug would refuse every caller of a healthy supplier, while the
// built-in rules still protect a sick one. It is reported as a
// *PanicError, like a panicking Match.
func readyToTrip(rule func(Counts) bool, c Counts) (bool, error) {
	trip, perr := Guard("ReadyToTrip", func() (bool, error) { return rule(c), nil }, nil)
	return trip && perr == nil, perr
}
