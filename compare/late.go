package compare

import (
	"errors"
	"fmt"
	"time"

	hystrix "github.com/afex/hystrix-go/hystrix"
	resbreaker "github.com/eapache/go-resiliency/breaker"
	"github.com/failsafe-go/failsafe-go"
	fsbreaker "github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/sony/gobreaker/v2"

	"github.com/fusebox-go/fusebox/breaker"
)

// A breaker as the late-result scenario drives it: call makes one
// protected call on the calling goroutine; state reads the state without
// changing it ("closed", "open", "half-open").
type lateBreaker struct {
	call  func(fn func() error) error
	state func() string
	// settle waits until results the library processes asynchronously
	// have been (hystrix-go reports on its own goroutines).
	settle func()
}

// LateLib is a breaker under the late-result scenario.
type LateLib struct {
	Name string
	// Bubble: it can run inside a testing/synctest bubble (hystrix-go
	// cannot: its per-command goroutines never end).
	Bubble bool
	New    func(s Settings) (lateBreaker, error)
}

// LateLibs returns the breakers of the late-result scenario.
func LateLibs() []LateLib {
	return []LateLib{
		{"fusebox-breaker", true, func(s Settings) (lateBreaker, error) {
			b, err := breaker.New(breaker.Config{ConsecutiveFailures: s.Failures, ResetTimeout: s.Reset})
			if err != nil {
				return lateBreaker{}, err
			}
			return lateBreaker{
				call: func(fn func() error) error {
					p, err := b.Allow()
					if err != nil {
						return err
					}
					err = fn()
					p.Done(err)
					return err
				},
				state: func() string { return b.State().String() },
			}, nil
		}},
		{"gobreaker", true, func(s Settings) (lateBreaker, error) {
			cb := gobreaker.NewCircuitBreaker[struct{}](gobreakerSettings(s))
			return lateBreaker{
				call: func(fn func() error) error {
					_, err := cb.Execute(func() (struct{}, error) { return struct{}{}, fn() })
					return err
				},
				state: func() string { return cb.State().String() },
			}, nil
		}},
		{"failsafe-go", true, func(s Settings) (lateBreaker, error) {
			cb := fsbreaker.NewBuilder[any]().WithFailureThreshold(uint(s.Failures)).
				WithSuccessThreshold(1).WithDelay(s.Reset).Build()
			ex := failsafe.With[any](cb)
			return lateBreaker{
				call: func(fn func() error) error { return ex.Run(fn) },
				state: func() string {
					switch cb.State() {
					case fsbreaker.ClosedState:
						return "closed"
					case fsbreaker.OpenState:
						return "open"
					}
					return "half-open"
				},
			}, nil
		}},
		{"hystrix-go", false, func(s Settings) (lateBreaker, error) {
			// Its timeout must outlast the scenario, or it would report the
			// pre-trip call at its timeout and drop the late result.
			s.Timeout = 20 * s.Reset
			name, err := newHystrixCircuit(s)
			if err != nil {
				return lateBreaker{}, err
			}
			c, _, _ := hystrix.GetCircuit(name)
			return lateBreaker{
				call: func(fn func() error) error { return hystrix.Do(name, fn, nil) },
				// hystrix-go has no half-open state: an open circuit lets
				// one test call through once the sleep window has passed.
				state: func() string {
					if c.IsOpen() {
						return "open"
					}
					return "closed"
				},
				settle: func() { time.Sleep(20 * time.Millisecond) },
			}, nil
		}},
		{"go-resiliency", true, func(s Settings) (lateBreaker, error) {
			b := resbreaker.New(s.Failures, 1, s.Reset)
			return lateBreaker{
				call: func(fn func() error) error { return b.Run(fn) },
				state: func() string {
					return [...]string{"closed", "open", "half-open"}[b.GetState()]
				},
			}, nil
		}},
	}
}

// newHystrixCircuit configures a hystrix command from s and makes its circuit.
func newHystrixCircuit(s Settings) (string, error) {
	name := HystrixCommand("late", s)
	_, _, err := hystrix.GetCircuit(name)
	return name, err
}

// Change is a breaker's state just before and just after one event.
type Change struct{ Before, After string }

// String shows the change as "before → after", or "state (ignored)".
func (c Change) String() string {
	if c.Before == c.After {
		return c.After + " (ignored)"
	}
	return c.Before + " → " + c.After
}

// LateResult says what results of calls admitted before a trip did when
// they arrived later.
type LateResult struct {
	Lib string
	// SuccessWhileOpen: a pre-trip call succeeds while the breaker is open.
	SuccessWhileOpen Change
	// FailureWhileProbing: a pre-trip call fails while the half-open probe
	// runs; ProbeAfterFailure: that probe then succeeds.
	FailureWhileProbing, ProbeAfterFailure Change
	// SuccessWhileProbing: a pre-trip call succeeds while the probe runs.
	SuccessWhileProbing Change
}

// Decided reports whether any late result changed the breaker's state.
func (r LateResult) Decided() bool {
	for _, c := range []Change{r.SuccessWhileOpen, r.FailureWhileProbing, r.SuccessWhileProbing} {
		if c.Before != c.After {
			return true
		}
	}
	return false
}

var errLateFailure = errors.New("compare: late failure")

// pending is a call running on its own goroutine until it is released
// with the error it should return.
type pending struct {
	release chan error
	done    chan error
}

func start(b lateBreaker) (*pending, error) {
	p := &pending{release: make(chan error), done: make(chan error, 1)}
	entered := make(chan struct{})
	go func() {
		p.done <- b.call(func() error { close(entered); return <-p.release })
	}()
	select {
	case <-entered:
		return p, nil
	case err := <-p.done:
		return nil, fmt.Errorf("call refused: %w", err)
	}
}

func (p *pending) finish(err error) { p.release <- err; <-p.done }

// trip fails calls until the breaker reports open (a few for all but
// hystrix-go, whose health check runs on collected metrics).
func trip(b lateBreaker, s Settings) error {
	for i := 0; b.state() != "open"; i++ {
		if i >= 100*s.Failures {
			return errors.New("breaker did not open")
		}
		_ = b.call(func() error { return errLateFailure })
		if b.settle != nil && i >= s.Failures-1 {
			b.settle()
		}
	}
	return nil
}

// Late runs the three late-result cases against lib with the reset
// timeout s.Reset, in the current time (real, or virtual in a bubble).
func Late(lib LateLib, s Settings) (LateResult, error) {
	res := LateResult{Lib: lib.Name}
	settle := func(b lateBreaker) {
		if b.settle != nil {
			b.settle()
		}
	}
	// A call admitted before the trip, then the trip; returns the call.
	setup := func() (lateBreaker, *pending, error) {
		b, err := lib.New(s)
		if err != nil {
			return b, nil, err
		}
		a, err := start(b)
		if err != nil {
			return b, nil, err
		}
		if err := trip(b, s); err != nil {
			a.finish(nil)
			return b, nil, err
		}
		return b, a, nil
	}
	// The open period ends; one probe is admitted and left running.
	probe := func(b lateBreaker) (*pending, error) {
		time.Sleep(s.Reset + s.Reset/10)
		return start(b)
	}

	// 1. A late success while open.
	b, a, err := setup()
	if err != nil {
		return res, fmt.Errorf("%s: %w", lib.Name, err)
	}
	before := b.state()
	a.finish(nil)
	settle(b)
	res.SuccessWhileOpen = Change{before, b.state()}

	// 2. A late failure (then 3. a late success) while the probe runs;
	// then the probe succeeds.
	for i, late := range []error{errLateFailure, nil} {
		b, a, err := setup()
		if err != nil {
			return res, fmt.Errorf("%s: %w", lib.Name, err)
		}
		p, err := probe(b)
		if err != nil {
			a.finish(nil)
			return res, fmt.Errorf("%s: probe: %w", lib.Name, err)
		}
		before := b.state()
		a.finish(late)
		settle(b)
		after := b.state()
		p.finish(nil)
		settle(b)
		if i == 0 {
			res.FailureWhileProbing = Change{before, after}
			res.ProbeAfterFailure = Change{after, b.state()}
		} else {
			res.SuccessWhileProbing = Change{before, after}
		}
	}
	return res, nil
}
