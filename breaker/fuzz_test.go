package breaker_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
)

var errTimeoutKind = fmt.Errorf("call: %w", context.DeadlineExceeded)

// fuzzConfigs are the rule sets the fuzz test picks from (by the first byte).
var fuzzConfigs = []breaker.Config{
	{},
	{ConsecutiveFailures: 2, HalfOpenProbes: 3, ResetTimeout: 3 * time.Second, MaxResetTimeout: 10 * time.Second},
	{ConsecutiveFailures: 3, ErrorKinds: []breaker.KindRule{{Name: "timeout", Consecutive: 2, Match: func(err error) bool {
		return errors.Is(err, context.DeadlineExceeded)
	}}}},
	{ConsecutiveFailures: -1, FailureRate: 0.5, MinimumCalls: 4, WindowSize: 8, SlowCallRate: 0.75, SlowCallDuration: 2 * time.Second},
	{ConsecutiveFailures: 4, FailureRate: 0.3, MinimumCalls: 3, WindowDuration: 10 * time.Second, WindowBuckets: 5, HalfOpenProbes: 2},
	{ConsecutiveFailures: -1, SlowCallRate: 0.5, SlowCallDuration: time.Second, MinimumCalls: 2, WindowDuration: 4 * time.Second, WindowBuckets: 4,
		Classify: func(err error) breaker.Outcome {
			if errors.Is(err, context.DeadlineExceeded) {
				return breaker.Ignored
			}
			return breaker.Failure
		}},
	// ReadyToTrip alone, over a count-based window, as gobreaker users write it.
	{ConsecutiveFailures: -1, WindowSize: 5, ReadyToTrip: func(c breaker.Counts) bool {
		return c.Calls >= 3 && c.FailureRate >= 0.6
	}},
	// ReadyToTrip beside the built-in rules, over a time-based window, on
	// slow calls counted for it alone and on the consecutive count.
	{ConsecutiveFailures: 3, FailureRate: 0.8, MinimumCalls: 5, WindowDuration: 4 * time.Second, WindowBuckets: 4,
		SlowCallDuration: time.Second, ReadyToTrip: func(c breaker.Counts) bool {
			return c.SlowCalls >= 2 || (c.ConsecutiveFailures >= 2 && c.Calls >= 4)
		}},
	// A ReadyToTrip that panics now and then: no trip, and Done panics.
	{ConsecutiveFailures: 4, ReadyToTrip: func(c breaker.Counts) bool {
		if c.Calls%3 == 2 {
			panic("a bug in the rule")
		}
		return c.Failures >= 3 && c.SlowCallRate == 0
	}},
}

// maxFuzzOps bounds a fuzz input (256 steps: far more than any rule needs
// to reach every state). The fuzzer minimizes each new interesting input
// by trying to cut every subrange of it, quadratic in its length: with
// 2000-byte inputs one minimization ran the whole -fuzzminimizetime (60 s
// by default) while the fuzzer reported 0 execs/s.
const maxFuzzOps = 512

// fuzzStep names one step of a differential run in a failure message. It
// is formatted only when a check fails: formatting it at every step cost
// more than the step itself.
type fuzzStep struct{ n, op, arg int }

func (s fuzzStep) String() string {
	return fmt.Sprintf("step %d (op %d, arg %d)", s.n, s.op, s.arg)
}

// FuzzBreakerMatchesModel drives the lock-free breaker and the mutex-based
// reference model with the same random sequence of Allow, Done(outcome),
// Ignore, Reject, clock advances and operator calls, and compares their
// decisions and state after every step. Run long with `make fuzz`.
func FuzzBreakerMatchesModel(f *testing.F) {
	f.Add([]byte{0, 0, 0, 2, 0, 0, 2, 0, 0, 2, 0, 0, 2, 0, 0, 2, 0, 0, 0, 5, 9, 0, 1, 0})
	f.Add([]byte{1, 0, 0, 2, 0, 0, 0, 2, 0, 5, 3, 0, 0, 0, 0, 0, 1, 0, 1, 1, 1, 2, 5, 40, 0, 2, 0})
	f.Add([]byte{2, 0, 0, 3, 0, 0, 3, 0, 5, 50, 0, 0, 1, 0})
	f.Add([]byte{3, 0, 0, 5, 3, 1, 0, 2, 0, 0, 2, 0, 0, 1, 0, 0, 2, 0, 5, 10, 0, 1})
	f.Add([]byte{4, 0, 0, 2, 0, 5, 20, 0, 2, 0, 0, 2, 0, 0, 2, 0, 6, 0, 6, 1, 6, 2, 6, 3, 6, 4, 6, 5})
	f.Add([]byte{5, 0, 0, 5, 15, 1, 0, 0, 5, 15, 1, 0, 7, 0, 0, 3, 0})
	f.Add([]byte{0, 0, 0, 6, 3, 0, 6, 4, 0, 0, 6, 2, 6, 1, 0, 0, 4, 0, 7, 0})
	// ReadyToTrip: (op, arg) pairs after the config's byte; 3,0 is a failure.
	f.Add([]byte{6, 0, 0, 0, 0, 0, 0, 3, 0, 1, 0, 3, 0, 5, 50, 0, 0, 1, 0})
	f.Add([]byte{7, 0, 0, 0, 0, 5, 12, 1, 0, 1, 0, 5, 50, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 3, 0, 3, 0})
	f.Add([]byte{8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 3, 0, 3, 0, 5, 60, 0, 0, 1, 0})
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) == 0 || len(ops) > maxFuzzOps {
			return
		}
		cfg := fuzzConfigs[int(ops[0])%len(fuzzConfigs)]
		synctest.Test(t, func(t *testing.T) {
			runDifferential(t, cfg, ops[1:])
		})
	})
}

func runDifferential(t *testing.T, cfg breaker.Config, ops []byte) {
	var events []breaker.Event
	cfg.OnTransition = func(e breaker.Event) { events = append(events, e) }
	// Each side gets its own ReadyToTrip, which notes the counts it was
	// asked about: the two must ask the same questions.
	var seen [2][]breaker.Counts
	rule := cfg.ReadyToTrip
	watch := func(side int) func(breaker.Counts) bool {
		if rule == nil {
			return nil
		}
		return func(c breaker.Counts) bool {
			seen[side] = append(seen[side], c)
			return rule(c)
		}
	}
	cfg.ReadyToTrip = watch(0)
	b, err := breaker.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ReadyToTrip = watch(1)
	m := newModel(cfg)
	done := func(step fuzzStep, p breaker.Permit, mp modelPermit, err error) {
		panicked := func() (panicked bool) {
			defer func() { panicked = recover() != nil }()
			p.Done(err)
			return false
		}()
		if want := m.Done(mp, err); panicked != want {
			t.Fatalf("%s: Done panicked: breaker %v, model %v", step, panicked, want)
		}
	}
	type pair struct {
		real  breaker.Permit
		model modelPermit
	}
	var permits []pair
	take := func(i int) (pair, bool) {
		if len(permits) == 0 {
			return pair{}, false
		}
		i %= len(permits)
		p := permits[i]
		permits = append(permits[:i], permits[i+1:]...)
		return p, true
	}
	arg := func(i int) int {
		if i+1 < len(ops) {
			return int(ops[i+1])
		}
		return 0
	}
	errs := []error{errBoom, errTimeoutKind, context.Canceled}

	for i := 0; i < len(ops); i += 2 {
		op, a := ops[i]%8, arg(i)
		step := fuzzStep{i / 2, int(op), a}
		switch op {
		case 0: // Allow
			rp, rerr := b.Allow()
			mp, merr := m.Allow()
			if (rerr == nil) != (merr == nil) {
				t.Fatalf("%s: Allow: breaker err %v, model err %v", step, rerr, merr)
			}
			if rerr == nil && len(permits) < 32 {
				permits = append(permits, pair{rp, mp})
			}
		case 1: // Done(success)
			if p, ok := take(a); ok {
				done(step, p.real, p.model, nil)
			}
		case 2, 3: // Done(error): failure, timeout kind, or cancellation
			if p, ok := take(a); ok {
				done(step, p.real, p.model, errs[(a+int(op))%len(errs)])
			}
		case 4: // Ignore
			if p, ok := take(a); ok {
				p.real.Ignore()
				m.record(p.model, breaker.Ignored, nil)
			}
		case 5: // the clock moves on: 0 to 25.5 s in 100 ms steps
			time.Sleep(time.Duration(a) * 100 * time.Millisecond)
		case 6: // operators
			switch a % 6 {
			case 0:
				b.Trip(breaker.Manual)
				m.Trip(breaker.Manual)
			case 1:
				b.Reset()
				m.Reset()
			case 2:
				b.ForceOpen()
				m.override(breaker.ForcedOpen)
			case 3:
				b.Disable()
				m.override(breaker.Disabled)
			case 4:
				b.Trip(breaker.QueueFull)
				m.Trip(breaker.QueueFull)
			case 5:
				if got, want := b.Drained(), m.Drained(); got != want {
					t.Fatalf("%s: Drained: breaker %v, model %v", step, got, want)
				}
			}
		case 7: // the bulkhead refused the call
			if p, ok := take(a); ok {
				r := breaker.Saturation
				if a%2 == 1 {
					r = breaker.QueueFull
				}
				p.real.Reject(r)
				m.Reject(p.model, r)
			}
		}
		compare(t, step, b, m, events)
		if !slices.Equal(seen[0], seen[1]) {
			t.Fatalf("%s: ReadyToTrip asked\nbreaker %+v\nmodel   %+v", step, seen[0], seen[1])
		}
	}
}

// compare is no t.Helper: it runs after every step, and Helper's stack
// walk cost a third of the fuzzer's time; its messages name the step.
func compare(t *testing.T, step fuzzStep, b *breaker.Breaker, m *model, events []breaker.Event) {
	s := b.Stats()
	m.mu.Lock()
	defer m.mu.Unlock()
	type view struct {
		State                             breaker.State
		Reason                            breaker.Reason
		Kind                              string
		Generation                        uint64
		Consecutive                       int
		Failures, Ignored, Rejected, Late uint64
		OpenUntil                         time.Duration
	}
	got := view{s.State, s.Reason, s.Kind, s.Generation, s.ConsecutiveFailures, s.Failures, s.Ignored, s.Rejected, s.Late, 0}
	want := view{m.state, m.reason, m.kind, m.gen, m.consecutive, m.failures, m.ignored, m.rejected, m.late, 0}
	if s.State == breaker.Open {
		got.OpenUntil = s.OpenUntil.Sub(m.epoch)
		want.OpenUntil = m.until
	}
	if s.State == breaker.HalfOpen && (s.ProbesAdmitted != m.admitted || s.ProbesSucceeded != m.succeeded) {
		t.Fatalf("%s: probes: breaker %d/%d, model %d/%d", step, s.ProbesAdmitted, s.ProbesSucceeded, m.admitted, m.succeeded)
	}
	if got != want {
		t.Fatalf("%s:\nbreaker %+v\nmodel   %+v", step, got, want)
	}
	if s.State == breaker.Closed && (m.cfg.FailureRate > 0 || m.cfg.SlowCallRate > 0) {
		w := m.window(m.now())
		if s.WindowCalls != len(w) {
			t.Fatalf("%s: window calls: breaker %d, model %d", step, s.WindowCalls, len(w))
		}
	}
	if uint64(len(events)) != m.gen {
		t.Fatalf("%s: %d events delivered, %d transitions", step, len(events), m.gen)
	}
}
