package fuseboxtest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Phase is one step of a Fake's script: Do, for For (measured from the
// start of the phase) or for Calls calls, whichever ends first. The last
// phase lasts for ever; every other one needs For or Calls.
type Phase struct {
	// Do is how the phase answers. The zero value is Healthy(0).
	Do Behavior
	// For ends the phase after this long. 0 means no time limit. ≥ 0.
	For time.Duration
	// Calls ends the phase after this many calls. 0 means no limit. ≥ 0.
	Calls int
}

// Fake is a scriptable fake supplier: it answers calls as its current
// Behavior says, moving through a script of phases by time or by number
// of calls, or switched by the test with Set. Use it as the function of a
// protected call (Fn), as an HTTP server (a Handler), or inside a gRPC
// service method of your own (Call). Time is read with the time package,
// so inside a testing/synctest bubble a script runs on the bubble's
// clock: an hour of hanging takes no real time. A Fake starts no
// goroutine. It is safe for concurrent use.
type Fake struct {
	calls, inside atomic.Int64

	mu     sync.Mutex
	script []Phase
	phase  int       // index into script of the current phase
	since  time.Time // when the current phase began
	count  int       // calls in the current phase
	rnd    *rand.Rand
}

// NewFake returns a Fake that follows script from now on; with no phase it
// is Healthy(0). An invalid script is an error that names the phase and
// the field.
func NewFake(script ...Phase) (*Fake, error) {
	if len(script) == 0 {
		script = []Phase{{}}
	}
	var errs []error
	for i, p := range script {
		if p.Do.bad != nil {
			errs = append(errs, fmt.Errorf("fuseboxtest: Phase[%d].Do: %w", i, p.Do.bad))
		}
		if p.For < 0 {
			errs = append(errs, fmt.Errorf("fuseboxtest: Phase[%d].For must be ≥ 0, got %v", i, p.For))
		}
		if p.Calls < 0 {
			errs = append(errs, fmt.Errorf("fuseboxtest: Phase[%d].Calls must be ≥ 0, got %d", i, p.Calls))
		}
		if i < len(script)-1 && p.For == 0 && p.Calls == 0 {
			errs = append(errs, fmt.Errorf("fuseboxtest: Phase[%d] would last for ever: set For or Calls, or make it the last phase", i))
		}
	}
	if errs != nil {
		return nil, errors.Join(errs...)
	}
	f := &Fake{}
	f.start(script)
	return f, nil
}

// Set switches the Fake to b from now on, in place of the rest of its
// script. Calls already inside go on as their behavior said. An invalid b
// is an error, and changes nothing. Set also scripts a zero Fake, which
// has no behavior until then.
func (f *Fake) Set(b Behavior) error {
	switch {
	case f == nil:
		return errNilFake
	case b.bad != nil:
		return fmt.Errorf("fuseboxtest: Set: %w", b.bad)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.start([]Phase{{Do: b}})
	return nil
}

// start puts script in force from its first phase; f.mu is held (or f is
// new).
func (f *Fake) start(script []Phase) {
	f.script, f.phase = script, 0
	f.enter(time.Now())
}

// enter begins the current phase at t.
func (f *Fake) enter(t time.Time) {
	f.since, f.count = t, 0
	f.rnd = rand.New(rand.NewPCG(f.script[f.phase].Do.seed, 0))
}

// next returns the behavior for a call that arrives now, and whether it
// fails (for a fraction).
func (f *Fake) next() (Behavior, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for now := time.Now(); f.advance(now); {
	}
	f.count++
	b := f.script[f.phase].Do
	failed := b.kind == fail && (b.fraction >= 1 || f.rnd.Float64() < b.fraction)
	return b, failed
}

// advance moves to the next phase if the current one is over at now, and
// reports whether it did.
func (f *Fake) advance(now time.Time) bool {
	if f.phase == len(f.script)-1 {
		return false
	}
	switch p := f.script[f.phase]; {
	case p.For > 0 && now.Sub(f.since) >= p.For:
		f.phase++
		f.enter(f.since.Add(p.For)) // phases by time do not drift
	case p.Calls > 0 && f.count >= p.Calls:
		f.phase++
		f.enter(now)
	default:
		return false
	}
	return true
}

// errNilFake is the error of a nil *Fake's methods.
var errNilFake = errors.New("fuseboxtest: a nil *Fake: make one with NewFake")

// unmade says why f cannot answer calls, or returns nil if it can. A zero
// Fake has no script to follow (NewFake or Set gives it one), so each of
// its calls is refused with an error rather than a panic.
func (f *Fake) unmade() error {
	if f == nil {
		return errNilFake
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.script == nil {
		return errors.New("fuseboxtest: a Fake must be made by NewFake (or given a behavior by Set)")
	}
	return nil
}

// Call is one call to the fake supplier: it returns nil (success) or the
// behavior's error, after the behavior's delay. Hang returns ctx.Err()
// when ctx ends. Wrap it in your own handler, a gRPC service method for
// instance, to fake a supplier behind any protocol. A nil context, or a
// Fake that NewFake did not make and Set never scripted, is an error.
func (f *Fake) Call(ctx context.Context) error {
	if ctx == nil {
		return errors.New("fuseboxtest: Call with a nil context (use context.Background())")
	}
	if err := f.unmade(); err != nil {
		return err
	}
	f.calls.Add(1)
	f.inside.Add(1)
	defer f.inside.Add(-1)
	b, failed := f.next()
	switch b.kind {
	case hang:
		<-ctx.Done()
		return ctx.Err()
	case stall:
		time.Sleep(b.d)
		return nil
	case fail:
		if failed {
			return b.err
		}
		return nil
	}
	return wait(ctx, b.d)
}

// wait waits d, or until ctx ends.
func wait(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Calls returns the number of calls the fake has received.
func (f *Fake) Calls() int { return int(f.calls.Load()) }

// Inside returns the number of calls inside the fake now: received and
// not yet answered.
func (f *Fake) Inside() int { return int(f.inside.Load()) }

// Fn returns a protected call's function (for executor.Do, Submit and the
// like) that calls f and returns v on success.
func Fn[T any](f *Fake, v T) func(context.Context) (T, error) {
	return func(ctx context.Context) (T, error) {
		if err := f.Call(ctx); err != nil {
			var zero T
			return zero, err
		}
		return v, nil
	}
}

// ServeHTTP answers a request as the fake: 200 "ok" on success, 503 with
// the error's text on failure; a hang holds the request until the client
// gives up (the request's context ends). A Fake that cannot answer (see
// Call) answers 500 naming the mistake.
func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})).ServeHTTP(w, r)
}

// Handler returns a handler that answers each request as the fake first,
// and passes the request to next when the fake's call succeeds: a real
// handler with a scripted outage in front. A failure answers 503 with the
// error's text. A nil next, or a Fake that cannot answer (see Call),
// answers 500 naming the mistake, so that the test fails on its status
// rather than as a fake outage.
func (f *Fake) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if next == nil {
			http.Error(w, "fuseboxtest: Handler was given a nil next handler", http.StatusInternalServerError)
			return
		}
		if err := f.unmade(); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		if err := f.Call(r.Context()); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		next.ServeHTTP(w, r)
	})
}
