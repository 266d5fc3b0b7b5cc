package executor

import (
	"time"

	"github.com/fusebox-go/fusebox/breaker"
)

// observe is a successful call that took d ns (-1: not known), the n-th
// of its histogram bucket, admitted with permit p: the stuck criterion's
// history samples it if its turn has come (stuck.State.Observe; only the
// present teaches: docs/design.md, "What the latency history learns
// from"). Its duration is in Stats.Durations all the same.
func (ex *Executor) observe(d int64, n uint64, inTime bool, p breaker.Permit) {
	if d < 0 {
		return
	}
	ex.counts().crit.Observe(d, n, inTime, ex.timeout.Load(), p.Current())
}

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
	return rc.crit.Quantile(q)
}
