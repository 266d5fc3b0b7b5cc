package breaker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// The defaults of the zero values of Config, and the bounds of its fields.
const (
	defaultConsecutiveFailures = 5
	defaultResetTimeout        = 5 * time.Second
	defaultHalfOpenProbes      = 1
	defaultMinimumCalls        = 10
	defaultWindowSize          = 100
	defaultWindowBuckets       = 10

	maxHalfOpenProbes = 1000
	// A window is allocated for every closed period, so it must stay a
	// sensible size.
	maxWindowSize    = 1 << 20
	maxWindowBuckets = 1 << 16
	maxThreshold     = 1 << 30
	// maxTimeout (a hundred years) bounds ResetTimeout and MaxResetTimeout,
	// so that open periods cannot overflow the clock.
	maxTimeout = 100 * 365 * 24 * time.Hour
)

// Config is plain data: every field has a documented zero value, so a
// per-supplier configuration can come from a file. The rules are independent
// and any of them trips the breaker; when several fire on the same call the
// reported reason is the first of ErrorKind, ConsecutiveFailures,
// FailureRate, SlowCallRate, ReadyToTrip.
type Config struct {
	// Name identifies the supplier in events and stats. Optional.
	Name string

	// ConsecutiveFailures trips after this many failures in a row that match
	// no ErrorKinds rule. 0 means 5; -1 turns the rule off. A success clears
	// the count; an ignored outcome leaves it as it is.
	ConsecutiveFailures int

	// ErrorKinds are per-kind consecutive thresholds, e.g. 10 timeouts or 3
	// refused connections in a row. A failure is matched against the rules
	// in order; the first that matches counts it (and the general
	// ConsecutiveFailures count does not). A success clears every count.
	ErrorKinds []KindRule

	// FailureRate trips when failures/calls over the sliding window reach
	// this rate (equality trips) and the window holds at least MinimumCalls
	// calls. In (0, 1]; 0 turns the rule off. The share is computed as
	// float64(failures)/float64(calls), so a rate written as a fraction
	// trips at exactly that fraction: 0.3 trips at 3 failures of 10, 2.0/3
	// at 2 of 3.
	FailureRate float64

	// SlowCallRate trips when calls lasting SlowCallDuration or longer reach
	// this share of the window (with at least MinimumCalls calls). In (0, 1];
	// 0 turns the rule off. Needs SlowCallDuration.
	SlowCallRate float64
	// SlowCallDuration is the duration from Allow to Done at which a call
	// counts as slow, whatever its outcome. 0 unless SlowCallRate is set.
	SlowCallDuration time.Duration

	// MinimumCalls is how many calls the window must hold before a rate
	// rule may trip. 0 means 10. With a count-based window it must not
	// exceed WindowSize.
	MinimumCalls int
	// WindowSize makes the window count-based: the last WindowSize calls.
	// 0 means 100 when a rate rule is set and WindowDuration is 0.
	WindowSize int
	// WindowDuration makes the window time-based: the calls of the last
	// WindowDuration, kept in WindowBuckets buckets that age out whole.
	// 0 means count-based. Exclusive with WindowSize.
	WindowDuration time.Duration
	// WindowBuckets is the number of buckets of a time-based window. 0
	// means 10; WindowDuration/WindowBuckets must be at least a microsecond.
	WindowBuckets int

	// ReadyToTrip is a trip rule of your own, as gobreaker's: after every
	// success and failure recorded while the breaker is closed it gets the
	// counts the rules look at (see Counts), and true trips the breaker with
	// reason ReadyToTrip. It adds to the other rules (any of them trips);
	// set ConsecutiveFailures to -1 for it to be the only one. With it the
	// breaker keeps the sliding window (WindowSize, WindowDuration) and the
	// consecutive count even when no built-in rule needs them, and counts
	// slow calls if SlowCallDuration is set. It runs on the caller's
	// goroutine, concurrently for concurrent calls, so it must be safe for
	// concurrent use; keep it fast and pure. A panic in it is recovered and
	// means "do not trip": the call's outcome is recorded and the other
	// rules still decide, and the panic is reported as a *PanicError
	// ("ReadyToTrip") the way a panicking Match is (see Permit.Done). nil
	// means no such rule.
	ReadyToTrip func(Counts) bool

	// ResetTimeout is how long the breaker stays open before it admits a
	// probe. 0 means 5s. Put it above the longest call (the executor
	// refuses anything else), so a probe always finds a free slot.
	ResetTimeout time.Duration
	// MaxResetTimeout turns on back-off: after the n-th failed probe in a
	// row the open period is ResetTimeout×(n+1), capped at MaxResetTimeout.
	// 0 means no back-off; otherwise it must be ≥ ResetTimeout.
	MaxResetTimeout time.Duration
	// ResetJitter lengthens each open period by a random share of up to
	// this fraction (never shortens it, so the probe-slot guarantee holds).
	// In [0, 1]; 0 means none.
	ResetJitter float64

	// HalfOpenProbes is how many probes run in half-open; all of them must
	// succeed to close. 0 means 1; at most 1000.
	HalfOpenProbes int

	// Classify maps a non-nil error to an Outcome; nil errors are always a
	// Success. nil means DefaultClassify. Mark business errors ("card
	// declined", HTTP 4xx) as Success or Ignored here.
	Classify func(error) Outcome

	// OnTransition receives one Event per real transition, one at a time,
	// in transition order, on the goroutine that caused the transition (or
	// one that caused a later one). It may call the breaker's methods. Keep
	// it fast: a caller waits for it. In an executor that goroutine is the
	// submitter's (a saturation trip), the call's own (its outcome), or the
	// one the executor starts to record a call's timeout, and the call
	// whose outcome caused the transition resolves its future only after
	// the listener returns: a blocking listener delays that call's result,
	// and no other call's. A listener
	// that panics is recovered and logged with log/slog; it changes no
	// call's result. One that ends its goroutine with runtime.Goexit (as
	// t.FailNow does) is logged too, and later events are still delivered;
	// the goroutine it ran on ends (an executor resolves the call that was
	// running there with a *PanicError). nil means no events.
	OnTransition func(Event)
}

// KindRule is a consecutive-failure rule of its own for one kind of error.
type KindRule struct {
	// Name appears in Event.Kind when this rule trips. Required.
	Name string
	// Match reports whether a failure is of this kind. Required.
	Match func(error) bool
	// Consecutive trips the breaker after this many failures of this kind in
	// a row. Must be ≥ 1.
	Consecutive int
}

// DefaultClassify counts context.Canceled as Ignored (the caller gave up;
// the supplier did nothing wrong) and every other error, timeouts included,
// as a Failure.
func DefaultClassify(err error) Outcome {
	if errors.Is(err, context.Canceled) {
		return Ignored
	}
	return Failure
}

// rules is Config compiled: defaults applied, rates in millionths. It is
// embedded in every Breaker, so it is kept small: what only the optional
// rules need sits behind opt.
type rules struct {
	name        string
	listener    func(Event)
	reset       int64
	consecutive int32 // 0: off
	probes      uint32
	timed       bool     // the slow-call rule needs a start time per permit
	opt         *optRule // nil unless an optional setting is used
}

// optRule holds the optional settings.
type optRule struct {
	classify     func(error) Outcome // nil: DefaultClassify
	maxReset     int64
	jitter       float64
	kinds        []KindRule
	failureRate  float64 // 0: off
	slowRate     float64 // 0: off
	slowDuration int64
	minCalls     int64
	windowSize   int   // count-based window; 0 if time-based
	bucketWidth  int64 // time-based window; 0 if count-based
	buckets      int
	readyToTrip  func(Counts) bool // nil: no custom rule
}

func (o *optRule) hasWindow() bool { return o != nil && (o.rated() || o.readyToTrip != nil) }

// rated reports whether a built-in rate rule is set.
func (o *optRule) rated() bool { return o.failureRate > 0 || o.slowRate > 0 }

// counting reports whether a closed period needs counters beyond the
// consecutive one.
func (o *optRule) counting() bool { return o != nil && (len(o.kinds) > 0 || o.hasWindow()) }

// compile validates cfg and applies the defaults. Every rule is checked
// by a validator of its own, and every invalid field is reported, by name.
func compile(cfg Config) (rules, error) {
	var c checker
	r := rules{
		name:        cfg.Name,
		listener:    cfg.OnTransition,
		consecutive: c.consecutive(cfg.ConsecutiveFailures),
		probes:      c.probes(cfg.HalfOpenProbes),
	}
	r.reset = int64(c.resetTimeout(cfg))
	o := &optRule{
		classify:     cfg.Classify,
		jitter:       c.jitter(cfg.ResetJitter),
		maxReset:     int64(cfg.MaxResetTimeout),
		kinds:        c.kinds(cfg.ErrorKinds),
		failureRate:  c.rate("FailureRate", cfg.FailureRate),
		slowRate:     c.rate("SlowCallRate", cfg.SlowCallRate),
		slowDuration: int64(cfg.SlowCallDuration),
		readyToTrip:  cfg.ReadyToTrip,
	}
	c.slowCall(cfg)
	c.window(cfg, o)
	if c.errs != nil {
		return rules{}, errors.Join(c.errs...)
	}
	if o.counting() || o.classify != nil || o.maxReset > 0 || o.jitter > 0 {
		r.opt = o
		r.timed = o.slowDuration > 0 // the slow-call rule, or slow calls counted for ReadyToTrip
	}
	return r, nil
}

// checker collects the errors of compile's validators.
type checker struct{ errs []error }

func (c *checker) bad(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf("breaker: "+format, args...))
}

func (c *checker) consecutive(n int) int32 {
	switch {
	case n == 0:
		return defaultConsecutiveFailures
	case n == -1:
		return 0 // off
	case n < 0 || n > maxThreshold:
		c.bad("ConsecutiveFailures must be in [1, %d], 0 (default 5) or -1 (off), got %d", maxThreshold, n)
	}
	return int32(n)
}

func (c *checker) kinds(kinds []KindRule) []KindRule {
	for i, k := range kinds {
		if k.Name == "" {
			c.bad("ErrorKinds[%d].Name must not be empty", i)
		}
		if k.Match == nil {
			c.bad("ErrorKinds[%d].Match must not be nil", i)
		}
		if k.Consecutive < 1 || k.Consecutive > maxThreshold {
			c.bad("ErrorKinds[%d].Consecutive must be in [1, %d], got %d", i, maxThreshold, k.Consecutive)
		}
	}
	return kinds
}

func (c *checker) rate(field string, v float64) float64 {
	if math.IsNaN(v) || v < 0 || v > 1 {
		c.bad("%s must be in (0, 1] or 0 (off), got %v", field, v)
		return 0
	}
	return v
}

// slowCall checks that the slow-call rule has both its halves.
func (c *checker) slowCall(cfg Config) {
	switch {
	case cfg.SlowCallDuration < 0:
		c.bad("SlowCallDuration must be ≥ 0, got %v", cfg.SlowCallDuration)
	case cfg.SlowCallRate > 0 && cfg.SlowCallDuration == 0:
		c.bad("SlowCallDuration must be set when SlowCallRate is")
	case cfg.SlowCallRate == 0 && cfg.SlowCallDuration > 0 && cfg.ReadyToTrip == nil:
		c.bad("SlowCallRate must be set when SlowCallDuration is (or ReadyToTrip, to count slow calls for it)")
	}
}

// window checks the sliding window's settings and sizes o's window.
func (c *checker) window(cfg Config, o *optRule) {
	if cfg.FailureRate == 0 && cfg.SlowCallRate == 0 {
		// The window settings mean something only to a rate rule (or,
		// but for MinimumCalls, which gates the rate rules alone, to
		// ReadyToTrip); accepting them without one would let a typo (a
		// forgotten FailureRate) pass silently, as SlowCallDuration
		// without SlowCallRate would.
		const rate = "a rate rule (FailureRate or SlowCallRate)"
		window := cfg.ReadyToTrip == nil
		c.unused("MinimumCalls", cfg.MinimumCalls != 0, rate)
		c.unused("WindowSize", cfg.WindowSize != 0 && window, rate+" or ReadyToTrip")
		c.unused("WindowDuration", cfg.WindowDuration != 0 && window, rate+" or ReadyToTrip")
		c.unused("WindowBuckets", cfg.WindowBuckets != 0 && window, rate+" or ReadyToTrip")
	}
	if cfg.WindowBuckets != 0 && cfg.WindowDuration == 0 {
		c.bad("WindowBuckets (%d) needs WindowDuration", cfg.WindowBuckets)
	}
	if cfg.MinimumCalls < 0 {
		c.bad("MinimumCalls must be ≥ 0, got %d", cfg.MinimumCalls)
	}
	o.minCalls = int64(cmp.Or(cfg.MinimumCalls, defaultMinimumCalls))
	c.windowShape(cfg, o)
}

// windowShape makes o's window count-based or time-based, and sizes it.
func (c *checker) windowShape(cfg Config, o *optRule) {
	switch {
	case cfg.WindowSize < 0 || cfg.WindowSize > maxWindowSize:
		c.bad("WindowSize must be in [0, %d], got %d", maxWindowSize, cfg.WindowSize)
	case cfg.WindowDuration < 0:
		c.bad("WindowDuration must be ≥ 0, got %v", cfg.WindowDuration)
	case cfg.WindowBuckets < 0 || cfg.WindowBuckets > maxWindowBuckets:
		c.bad("WindowBuckets must be in [0, %d], got %d", maxWindowBuckets, cfg.WindowBuckets)
	case cfg.WindowSize > 0 && cfg.WindowDuration > 0:
		c.bad("WindowSize and WindowDuration are exclusive, got %d and %v", cfg.WindowSize, cfg.WindowDuration)
	case cfg.WindowDuration > 0:
		o.buckets = cmp.Or(cfg.WindowBuckets, defaultWindowBuckets)
		o.bucketWidth = int64(cfg.WindowDuration) / int64(o.buckets)
		if o.bucketWidth < int64(time.Microsecond) {
			c.bad("WindowDuration/WindowBuckets must be ≥ 1µs, got %v/%d", cfg.WindowDuration, o.buckets)
		}
	default:
		o.windowSize = cmp.Or(cfg.WindowSize, defaultWindowSize)
		if o.rated() && o.minCalls > int64(o.windowSize) {
			c.bad("MinimumCalls (%d) must not exceed WindowSize (%d), or no rate rule could trip", o.minCalls, o.windowSize)
		}
	}
}

func (c *checker) unused(field string, set bool, needs string) {
	if set {
		c.bad("%s needs %s", field, needs)
	}
}

// resetTimeout checks ResetTimeout and MaxResetTimeout and returns the
// effective reset timeout.
func (c *checker) resetTimeout(cfg Config) time.Duration {
	reset := cmp.Or(cfg.ResetTimeout, defaultResetTimeout)
	if cfg.ResetTimeout < 0 || cfg.ResetTimeout > maxTimeout {
		c.bad("ResetTimeout must be in [0, %v], got %v", maxTimeout, cfg.ResetTimeout)
	}
	switch {
	case cfg.MaxResetTimeout < 0 || cfg.MaxResetTimeout > maxTimeout:
		c.bad("MaxResetTimeout must be in [0, %v], got %v", maxTimeout, cfg.MaxResetTimeout)
	case cfg.MaxResetTimeout > 0 && cfg.MaxResetTimeout < reset:
		c.bad("MaxResetTimeout (%v) must be ≥ ResetTimeout (%v)", cfg.MaxResetTimeout, reset)
	}
	return reset
}

func (c *checker) jitter(j float64) float64 {
	if math.IsNaN(j) || j < 0 || j > 1 {
		c.bad("ResetJitter must be in [0, 1], got %v", j)
	}
	return j
}

func (c *checker) probes(p int) uint32 {
	switch {
	case p == 0:
		return defaultHalfOpenProbes
	case p < 0 || p > maxHalfOpenProbes:
		c.bad("HalfOpenProbes must be in [1, %d] or 0 (default 1), got %d", maxHalfOpenProbes, p)
	}
	return uint32(p)
}

// period is the open period after attempts failed openings in a row
// (attempts ≥ 1): linear back-off capped at maxReset, plus jitter.
func (r *rules) period(attempts uint32, rnd func() float64) int64 {
	p, o := r.reset, r.opt
	if o == nil {
		return p
	}
	if o.maxReset > 0 {
		p = r.reset * int64(attempts)
		if p > o.maxReset || p/int64(attempts) != r.reset { // cap, overflow included
			p = o.maxReset
		}
	}
	if o.jitter > 0 {
		p += int64(float64(p) * o.jitter * rnd())
	}
	return p
}

// classify applies Config.Classify to a non-nil error (DefaultClassify for
// nil rules). A panic (in the classifier, or in an Unwrap or Is method of
// err) is a Failure.
func (r *rules) classify(err error) (Outcome, error) {
	o, perr := Guard("Classify", func() (Outcome, error) {
		if r != nil && r.opt != nil && r.opt.classify != nil {
			return r.opt.classify(err), nil
		}
		return DefaultClassify(err), nil
	}, nil)
	if perr != nil {
		return Failure, perr
	}
	return o, nil
}
