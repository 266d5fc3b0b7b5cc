package dashboard

import (
	"time"

	"github.com/fusebox-go/fusebox/executor"
)

// latency returns the supplier's median and 99th-percentile call latency,
// or 0, 0 when they are not known; the page then shows "—".
//
// NOT WIRED YET: executor.Stats has no latency fields yet. Once it has
// LatencyP50 and LatencyP99, the body becomes
//
//	return s.LatencyP50, s.LatencyP99
//
// and nothing else in this package changes (TestLatencyIsReadThroughOneFunction
// then needs its expectation updated).
func latency(s executor.Stats) (p50, p99 time.Duration) {
	_ = s
	return 0, 0
}
