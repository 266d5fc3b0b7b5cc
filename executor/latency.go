package executor

import (
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/internal/latency"
)

// observe is a successful call that took d ns (-1: not known), the n-th
// of its histogram bucket, admitted with permit p: sample its duration if
// its turn has come. The warm-up counts the whole history; after it,
// taking every latency.Every-th call of each bucket thins every duration alike,
// so the percentiles keep their shape.
//
// Only the present teaches (docs/design.md, "What the history learns
// from"): a call admitted under an older breaker generation (before a
// trip: the late answers of an incident must not raise the threshold that
// detects the next one; or a probe, whose success closed the breaker) and
// a call that returned after its deadline (inTime false: it ran its whole
// timeout, which says the supplier hung, not how long it takes) or that
// ran longer than the invocation timeout now in force (admitted before a
// Reconfigure shortened it: today it would have timed out) are not
// sampled. Their durations are in Stats.Durations all the same.
func (ex *Executor) observe(d int64, n uint64, inTime bool, p breaker.Permit) {
	if d < 0 {
		return
	}
	rc := ex.counts()
	if n%latency.Every != 0 && rc.warm.Load() {
		return
	}
	if !inTime || d >= ex.timeout.Load() || !p.Current() {
		return
	}
	l := rc.lat.Load()
	if l == nil {
		// Made at the first success: an executor that never had one (an
		// idle supplier of a large Group) does not pay for it.
		rc.lat.CompareAndSwap(nil, &latency.Histogram{})
		l = rc.lat.Load()
	}
	if l.Record(d) >= latency.Warm && !rc.warm.Load() {
		rc.warm.Store(true)
	}
}

// latencyStats returns the median and the 99th percentile of recent
// successful calls, 0 and 0 without history.
func (ex *Executor) latencyStats() (p50, p99 time.Duration) {
	rc := ex.rare.Load()
	if rc == nil || rc.lat.Load() == nil {
		return 0, 0
	}
	l := rc.lat.Load()
	return l.Quantile(0.50), l.Quantile(0.99)
}
