package dashboard

import (
	"time"

	"github.com/fusebox-go/fusebox/executor"
)

// latency returns the supplier's median and 99th-percentile call latency,
// or 0, 0 when they are not known yet (fewer than 20 successful calls);
// the page then shows "—".
func latency(s executor.Stats) (p50, p99 time.Duration) {
	return s.LatencyP50, s.LatencyP99
}
