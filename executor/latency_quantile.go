package executor

import "time"

// Latency returns the q-quantile (0 < q < 1) of the durations of the
// supplier's recent successful calls, from the same history as
// Stats.LatencyP50 and Stats.LatencyP99, to within 25 % (on the slow
// side). It returns 0 without history (fewer than 20 samples), for q
// outside (0, 1), and for a nil or zero Executor. It reads the whole histogram (120 atomic words) and
// allocates nothing; a caller on a hot path, such as a hedging policy
// that waits for the recent p95 before a second attempt, reads it now and
// then and keeps the value. Safe for concurrent use.
func (ex *Executor) Latency(q float64) time.Duration {
	if ex == nil || !(q > 0 && q < 1) {
		return 0
	}
	rc := ex.rare.Load()
	if rc == nil {
		return 0
	}
	l := rc.lat.Load()
	if l == nil {
		return 0
	}
	return l.Quantile(q)
}
