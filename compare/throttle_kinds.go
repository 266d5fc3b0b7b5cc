package compare

import (
	"errors"
	"time"

	"github.com/failsafe-go/failsafe-go/adaptivethrottler"
	"github.com/go-kratos/aegis/circuitbreaker"
	"github.com/go-kratos/aegis/circuitbreaker/sre"
	zerobreaker "github.com/zeromicro/go-zero/core/breaker"
	"github.com/zeromicro/go-zero/core/stat"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/priority"
	"github.com/fusebox-go/fusebox/throttle"
)

// ThrottleKind is one client-side protection: New makes the instance of
// one client.
type ThrottleKind struct {
	Name string
	New  func() (ThrottleClient, error)
}

// ThrottleClient is one client's protection. Admit reports whether to send
// a request, and if so returns the function that records its outcome
// (accepted: the supplier answered without an overload failure).
type ThrottleClient interface {
	Admit(p priority.Priority) (done func(accepted bool), ok bool)
	// States reports, for a protection with states, how often it opened
	// and how many of those openings came after it had closed again
	// (open → closed → open cycles); ok is false for the others.
	States() (opens, cycles int, ok bool)
}

// ThrottleKinds returns the protections compared, each at its defaults,
// and fusebox's throttle with K 1.5 (as go-zero's) for every request.
func ThrottleKinds() []ThrottleKind {
	return []ThrottleKind{
		{"none", func() (ThrottleClient, error) { return noProtection{}, nil }},
		{"fusebox breaker", newHardBreaker},
		{"fusebox throttle", func() (ThrottleClient, error) {
			t, err := throttle.New(throttle.Config{})
			return fuseboxThrottle{t}, err
		}},
		{"fusebox throttle K1.5", func() (ThrottleClient, error) {
			// K as go-zero's, for every request.
			t, err := throttle.New(throttle.Config{K: [priority.Levels]float64{priority.Default: 1.5}})
			return fuseboxThrottle{t}, err
		}},
		{"go-zero breaker", func() (ThrottleClient, error) {
			// go-zero reports every refusal through an alert log of
			// its own (off in its own tests only): silence it.
			stat.SetReporter(nil)
			return goZero{zerobreaker.NewBreaker()}, nil
		}},
		{"kratos sre", func() (ThrottleClient, error) {
			return &kratos{b: sre.NewBreaker()}, nil
		}},
		{"failsafe-go throttler", func() (ThrottleClient, error) {
			return failsafeThrottler{adaptivethrottler.NewWithDefaults[any]()}, nil
		}},
	}
}

type noProtection struct{}

func (noProtection) Admit(priority.Priority) (func(bool), bool) { return func(bool) {}, true }
func (noProtection) States() (int, int, bool)                   { return 0, 0, false }

// errOverload is the supplier's answer to a request beyond its capacity.
var errOverload = errors.New("supplier: overloaded")

type fuseboxBreaker struct {
	b             *breaker.Breaker
	opens, closes int
	cycles        int // closed → open after having closed once
}

// newHardBreaker is breaker.Breaker with its defaults: 5 consecutive
// failures trip it, 5 s open, one probe.
func newHardBreaker() (ThrottleClient, error) {
	fb := &fuseboxBreaker{}
	b, err := breaker.New(breaker.Config{OnTransition: func(e breaker.Event) {
		switch e.To {
		case breaker.Open:
			fb.opens++
			if e.From == breaker.Closed && fb.closes > 0 {
				fb.cycles++
			}
		case breaker.Closed:
			fb.closes++
		}
	}})
	fb.b = b
	return fb, err
}

func (f *fuseboxBreaker) Admit(priority.Priority) (func(bool), bool) {
	p, err := f.b.Allow()
	if err != nil {
		return nil, false
	}
	return func(ok bool) {
		if ok {
			p.Done(nil)
		} else {
			p.Done(errOverload)
		}
	}, true
}

func (f *fuseboxBreaker) States() (int, int, bool) { return f.opens, f.cycles, true }

type fuseboxThrottle struct{ t *throttle.Throttle }

func (f fuseboxThrottle) Admit(p priority.Priority) (func(bool), bool) {
	if !f.t.Admit(time.Now().UnixNano(), p) {
		return nil, false
	}
	return func(ok bool) { f.t.Record(time.Now().UnixNano(), p, ok) }, true
}

func (fuseboxThrottle) States() (int, int, bool) { return 0, 0, false }

type goZero struct{ b zerobreaker.Breaker }

func (g goZero) Admit(priority.Priority) (func(bool), bool) {
	p, err := g.b.Allow()
	if err != nil {
		return nil, false
	}
	return func(ok bool) {
		if ok {
			p.Accept()
		} else {
			p.Reject("overloaded")
		}
	}, true
}

func (goZero) States() (int, int, bool) { return 0, 0, false }

// kratos is aegis's SRE breaker used as Kratos's circuitbreaker middleware
// uses it: a request it rejects is marked failed.
type kratos struct{ b circuitbreaker.CircuitBreaker }

func (k *kratos) Admit(priority.Priority) (func(bool), bool) {
	if k.b.Allow() != nil {
		k.b.MarkFailed()
		return nil, false
	}
	return func(ok bool) {
		if ok {
			k.b.MarkSuccess()
		} else {
			k.b.MarkFailed()
		}
	}, true
}

func (*kratos) States() (int, int, bool) { return 0, 0, false }

type failsafeThrottler struct {
	t adaptivethrottler.AdaptiveThrottler[any]
}

func (f failsafeThrottler) Admit(priority.Priority) (func(bool), bool) {
	if !f.t.TryAcquirePermit() {
		return nil, false
	}
	return func(ok bool) {
		if ok {
			f.t.RecordSuccess()
		} else {
			f.t.RecordFailure()
		}
	}, true
}

func (failsafeThrottler) States() (int, int, bool) { return 0, 0, false }
