//go:build unix

package executor_test

import (
	"syscall"
	"time"
)

// cpuNow is the process's CPU time (user and system, every thread): on a
// shared machine a benchmark's CPU per operation is far steadier than its
// wall time, which counts the while other processes had the cores.
func cpuNow() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
