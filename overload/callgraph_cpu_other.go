//go:build !unix

package overload

import "math"

// selfCPU returns NaN: this system's CPU time is not read.
func selfCPU() float64 { return math.NaN() }

// CPUSeconds returns NaN: this system's CPU time is not read.
func CPUSeconds() float64 { return selfCPU() }
