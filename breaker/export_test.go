package breaker

// What the executor reaches through internal/hook, under the names the
// tests use.

func (p Permit) Probe() bool                       { return p.probe() }
func (p Permit) Record(o Outcome, err error) error { return p.record(o, err) }
func (p Permit) Reject(reason Reason)              { p.reject(reason) }
func (b *Breaker) Classify(err error) (Outcome, error) {
	return b.classify(err)
}
func (b *Breaker) Drained() bool { return b.drained() }

// NoReason is the reason of a breaker that has never changed state.
const NoReason = noReason
