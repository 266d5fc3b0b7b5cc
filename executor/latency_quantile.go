package executor

import "time"

// Latency returns the q-quantile (0 < q < 1) of recent successful calls,
// as Stats.LatencyP99, or 0 without history. It allocates nothing.
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
