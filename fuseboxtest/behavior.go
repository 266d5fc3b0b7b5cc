package fuseboxtest

import (
	"fmt"
	"math"
	"time"
)

// Behavior is how a Fake answers each call. Make one with Healthy, Hang,
// Stall, Fail or FailFraction; the zero Behavior is Healthy(0).
type Behavior struct {
	kind     kind
	d        time.Duration
	err      error
	fraction float64
	seed     uint64
	bad      error // why the arguments are invalid; reported by NewFake and Set
}

type kind uint8

const (
	healthy kind = iota
	hang
	stall
	fail
)

// Healthy answers every call with success after latency (0: at once). A
// call whose context ends first returns the context's error, as a client
// that gives up would see it. Switching a Fake to Healthy is how a
// supplier recovers. latency must be ≥ 0.
func Healthy(latency time.Duration) Behavior {
	b := Behavior{kind: healthy, d: latency}
	if latency < 0 {
		b.bad = fmt.Errorf("the latency of Healthy must be ≥ 0, got %v", latency)
	}
	return b
}

// Hang never answers: each call returns its context's error when that
// context ends (an executor's invocation timeout, a client's deadline).
// A call whose context never ends never returns.
func Hang() Behavior { return Behavior{kind: hang} }

// Stall answers every call with success after d, whatever its context: a
// supplier stuck on something that ignores the caller's deadline (the
// executor's overdue calls, which hold their slots until they return). d
// must be > 0.
func Stall(d time.Duration) Behavior {
	b := Behavior{kind: stall, d: d}
	if d <= 0 {
		b.bad = fmt.Errorf("the duration of Stall must be > 0, got %v", d)
	}
	return b
}

// Fail answers every call with err at once. err must not be nil.
func Fail(err error) Behavior {
	b := Behavior{kind: fail, err: err, fraction: 1}
	if err == nil {
		b.bad = fmt.Errorf("the error of Fail must not be nil")
	}
	return b
}

// FailFraction answers a share fraction of the calls with err and the
// others with success, at once. Which calls fail is drawn from a
// pseudo-random sequence seeded with seed, so the same calls in the same
// order fail the same way in every run. fraction must be in [0, 1] and
// err not nil.
func FailFraction(fraction float64, err error, seed uint64) Behavior {
	b := Behavior{kind: fail, err: err, fraction: fraction, seed: seed}
	switch {
	case math.IsNaN(fraction) || fraction < 0 || fraction > 1:
		b.bad = fmt.Errorf("the fraction of FailFraction must be in [0, 1], got %v", fraction)
	case err == nil:
		b.bad = fmt.Errorf("the error of FailFraction must not be nil")
	}
	return b
}

// String describes the behavior, for test messages: "hang", "fail: boom".
func (b Behavior) String() string {
	switch b.kind {
	case hang:
		return "hang"
	case stall:
		return fmt.Sprintf("stall %v", b.d)
	case fail:
		if b.fraction < 1 {
			return fmt.Sprintf("fail %g: %v", b.fraction, b.err)
		}
		return fmt.Sprintf("fail: %v", b.err)
	}
	return fmt.Sprintf("healthy %v", b.d)
}
