//go:build !unix

package executor_test

import "time"

// cpuNow: no process CPU clock here; the benchmarks report wall time only.
func cpuNow() (time.Duration, bool) { return 0, false }
