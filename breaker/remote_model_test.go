package breaker_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
)

// remoteModel extends the reference model with the fleet rules of
// remote.go, written from their documentation: operator overrides win,
// newer evidence wins (a breaker that never changed state has none), remote word never shortens an open period, and a
// hold never brings the probe before ResetTimeout after the opening.
type remoteModel struct {
	*model
	began   time.Duration // when the current state began
	seenGen uint64
}

// track notes the start of a new state; call it after every operation.
func (m *remoteModel) track() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.gen != m.seenGen {
		m.seenGen, m.began = m.gen, m.now()
	}
}

func (m *remoteModel) OpenRemote(since, until time.Duration) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.gen > 0 && m.began > since {
		return false
	}
	switch m.state {
	case breaker.Closed, breaker.HalfOpen:
		if m.state == breaker.Closed {
			m.attempts = 1
		}
		m.moveTo(breaker.Open, breaker.Remote, "")
		m.until = max(until, m.now())
		return true
	case breaker.Open:
		if until > m.until {
			m.until = until
			return true
		}
	}
	return false
}

func (m *remoteModel) CloseRemote(since time.Duration) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.gen > 0 && m.began > since || (m.state != breaker.Open && m.state != breaker.HalfOpen) {
		return false
	}
	m.moveTo(breaker.Closed, breaker.Remote, "")
	return true
}

func (m *remoteModel) HoldOpen(gen uint64, until time.Duration) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.state != breaker.Open || m.gen != gen {
		return false
	}
	m.until = max(until, m.began+m.cfg.ResetTimeout)
	return true
}

// FuzzRemoteMatchesModel drives the breaker and the model with calls,
// clock advances, operator calls and the fleet operations (OpenRemote,
// CloseRemote, HoldOpen) with times before and after now, and compares
// them after every step.
func FuzzRemoteMatchesModel(f *testing.F) {
	f.Add([]byte{0, 5, 0x35, 0, 0, 3, 10, 0, 0, 7, 4, 3, 60, 0, 0, 6, 2})
	f.Add([]byte{1, 2, 0, 2, 0, 2, 0, 5, 0x12, 3, 20, 0, 0, 7, 8, 7, 30, 6, 0, 3, 90, 0, 0})
	f.Add([]byte{0, 4, 2, 5, 0xf3, 4, 1, 5, 0x20, 4, 3, 5, 0x44, 6, 1, 0, 0})
	f.Add([]byte{3, 2, 0, 2, 0, 2, 0, 2, 0, 3, 50, 0, 0, 5, 0x07, 1, 0, 6, 0, 0, 0})
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) == 0 || len(ops) > maxFuzzOps {
			return
		}
		cfg := fuzzConfigs[int(ops[0])%len(fuzzConfigs)]
		synctest.Test(t, func(t *testing.T) {
			runRemoteDifferential(t, cfg, ops[1:])
		})
	})
}

func runRemoteDifferential(t *testing.T, cfg breaker.Config, ops []byte) {
	var events []breaker.Event
	cfg.OnTransition = func(e breaker.Event) { events = append(events, e) }
	b, err := breaker.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m := &remoteModel{model: newModel(cfg)}
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
	// The breaker and the model share the bubble's clock; both epochs are
	// the start of the bubble, so one offset converts between them.
	at := func(d time.Duration) time.Time { return m.epoch.Add(d) }
	step100 := func(n int) time.Duration { return time.Duration(n) * 100 * time.Millisecond }

	for i := 0; i < len(ops); i += 2 {
		op, a := ops[i]%8, 0
		if i+1 < len(ops) {
			a = int(ops[i+1])
		}
		step := fuzzStep{i / 2, int(op), a}
		now := m.now()
		switch op {
		case 0:
			rp, rerr := b.Allow()
			mp, merr := m.Allow()
			if (rerr == nil) != (merr == nil) {
				t.Fatalf("%s: Allow: breaker err %v, model err %v", step, rerr, merr)
			}
			if rerr == nil && len(permits) < 32 {
				permits = append(permits, pair{rp, mp})
			}
		case 1, 2:
			if p, ok := take(a); ok {
				var e error
				if op == 2 {
					e = errBoom
				}
				// A ReadyToTrip of the config's may panic: Done then
				// panics too, after recording, as the model says it must.
				panicked := func() (panicked bool) {
					defer func() { panicked = recover() != nil }()
					p.real.Done(e)
					return false
				}()
				if want := m.Done(p.model, e); panicked != want {
					t.Fatalf("%s: Done panicked: breaker %v, model %v", step, panicked, want)
				}
			}
		case 3:
			time.Sleep(step100(a))
		case 4:
			switch a % 4 {
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
			}
		case 5: // a remote trip: since up to 1.5 s ago, until from 2 s ago to 13 s ahead
			since, until := now-step100(a%16), now+step100(10*(a>>4)-20)
			if got, want := b.OpenRemote(at(since), at(until)), m.OpenRemote(since, until); got != want {
				t.Fatalf("%s: OpenRemote: breaker %v, model %v", step, got, want)
			}
		case 6: // a remote close: the probe started up to 2.5 s ago, or 0.5 s ahead
			since := now - step100(a%31-5)
			if got, want := b.CloseRemote(at(since)), m.CloseRemote(since); got != want {
				t.Fatalf("%s: CloseRemote: breaker %v, model %v", step, got, want)
			}
		case 7: // a hold, for this generation or the one before, 2 s ago to 10 s ahead
			gen := b.Stats().Generation - uint64(a&1)
			until := now + step100(a>>1-20)
			if got, want := b.HoldOpen(gen, at(until)), m.HoldOpen(gen, until); got != want {
				t.Fatalf("%s: HoldOpen: breaker %v, model %v", step, got, want)
			}
		}
		m.track()
		compare(t, step, b, m.model, events)
	}
}
