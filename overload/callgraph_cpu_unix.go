//go:build unix

package overload

import (
	"math"
	"syscall"
)

// selfCPU returns the user and system CPU seconds this process used.
func selfCPU() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return math.NaN()
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// CPUSeconds returns the user and system CPU seconds this process has
// used; NaN where the system does not say.
func CPUSeconds() float64 { return selfCPU() }
