package breaker_test

import (
	"sync"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
)

// model is a deliberately simple reference implementation of the breaker's
// rules: one mutex around plain fields, counters cleared by hand, the window
// a plain list of calls. It implements the documented semantics from the
// Config, independently of the real breaker's records and atomics, so the
// fuzz test can compare the two step by step. It has no jitter.
type model struct {
	mu    sync.Mutex
	cfg   breaker.Config
	epoch time.Time

	state    breaker.State
	reason   breaker.Reason
	kind     string
	gen      uint64 // transitions, as in events
	period   uint64 // changes of state record, silent resets included
	attempts int
	until    time.Duration // Open: when probes may start

	consecutive int
	kindRuns    []int
	calls       []modelCall // the closed period's calls, oldest first

	admitted, succeeded int // half-open probes

	failures, ignored, rejected, late uint64
}

type modelCall struct {
	at           time.Duration
	failed, slow bool
}

// modelPermit is a permit of the model: the period it was admitted in.
type modelPermit struct {
	period uint64
	start  time.Duration
}

func newModel(cfg breaker.Config) *model {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&cfg.ConsecutiveFailures, 5)
	def(&cfg.HalfOpenProbes, 1)
	def(&cfg.MinimumCalls, 10)
	def(&cfg.WindowBuckets, 10)
	if cfg.WindowDuration == 0 {
		def(&cfg.WindowSize, 100)
	}
	if cfg.ResetTimeout == 0 {
		cfg.ResetTimeout = 5 * time.Second
	}
	if cfg.Classify == nil {
		cfg.Classify = breaker.DefaultClassify
	}
	return &model{cfg: cfg, epoch: time.Now(), kindRuns: make([]int, len(cfg.ErrorKinds))}
}

func (m *model) now() time.Duration { return time.Since(m.epoch) }

func (m *model) moveTo(s breaker.State, r breaker.Reason, kind string) {
	m.state, m.reason, m.kind = s, r, kind
	m.gen++
	m.period++
	m.resetCounts()
	if s == breaker.Open {
		period := m.cfg.ResetTimeout
		if m.cfg.MaxResetTimeout > 0 {
			period = min(m.cfg.ResetTimeout*time.Duration(m.attempts), m.cfg.MaxResetTimeout)
		}
		m.until = m.now() + period
	}
}

func (m *model) resetCounts() {
	m.consecutive = 0
	clear(m.kindRuns)
	m.calls = nil
	m.admitted, m.succeeded = 0, 0
}

func (m *model) Allow() (modelPermit, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := modelPermit{period: m.period, start: m.now()}
	switch m.state {
	case breaker.Closed, breaker.Disabled:
		return p, nil
	case breaker.Open:
		if m.now() >= m.until {
			m.moveTo(breaker.HalfOpen, breaker.ResetTimeout, "")
			m.admitted = 1
			return modelPermit{period: m.period, start: p.start}, nil
		}
	case breaker.HalfOpen:
		if m.admitted < m.cfg.HalfOpenProbes {
			m.admitted++
			return p, nil
		}
	}
	m.rejected++
	return modelPermit{}, breaker.ErrOpen
}

// Done records the call's end, and reports whether a callback
// (ReadyToTrip) panicked, as the breaker's Done then does.
func (m *model) Done(p modelPermit, err error) (panicked bool) {
	o := breaker.Success
	if err != nil {
		o = m.cfg.Classify(err)
	}
	return m.record(p, o, err)
}

func (m *model) record(p modelPermit, o breaker.Outcome, err error) (panicked bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch o {
	case breaker.Failure:
		m.failures++
	case breaker.Ignored:
		m.ignored++
	}
	if p.period != m.period {
		m.late++
		return false
	}
	switch m.state {
	case breaker.HalfOpen:
		switch o {
		case breaker.Success:
			m.succeeded++
			if m.succeeded == m.cfg.HalfOpenProbes {
				m.moveTo(breaker.Closed, breaker.ProbesSucceeded, "")
			}
		case breaker.Failure:
			m.attempts++
			m.moveTo(breaker.Open, breaker.ProbeFailed, "")
		case breaker.Ignored:
			m.admitted--
		}
	case breaker.Closed:
		return m.recordClosed(p, o, err)
	}
	return false
}

// windowed reports whether the closed period keeps a window of calls.
func (m *model) windowed() bool {
	return m.cfg.FailureRate > 0 || m.cfg.SlowCallRate > 0 || m.cfg.ReadyToTrip != nil
}

func (m *model) recordClosed(p modelPermit, o breaker.Outcome, err error) (panicked bool) {
	if o == breaker.Ignored {
		return false
	}
	now := m.now()
	slow := m.cfg.SlowCallDuration > 0 && now-p.start >= m.cfg.SlowCallDuration
	if m.windowed() {
		m.calls = append(m.calls, modelCall{at: now, failed: o == breaker.Failure, slow: slow})
	}
	trip := func(r breaker.Reason, kind string) {
		m.attempts = 1
		m.moveTo(breaker.Open, r, kind)
	}
	if o == breaker.Success {
		m.consecutive = 0
		clear(m.kindRuns)
	} else {
		kind := -1
		for i, k := range m.cfg.ErrorKinds {
			if k.Match(err) {
				kind = i
				break
			}
		}
		if kind >= 0 {
			m.kindRuns[kind]++
			if m.kindRuns[kind] >= m.cfg.ErrorKinds[kind].Consecutive {
				trip(breaker.ErrorKind, m.cfg.ErrorKinds[kind].Name)
				return false
			}
		} else if m.cfg.ConsecutiveFailures > 0 || m.cfg.ReadyToTrip != nil {
			// Counted for ReadyToTrip even with the consecutive rule off.
			m.consecutive++
			if m.cfg.ConsecutiveFailures > 0 && m.consecutive >= m.cfg.ConsecutiveFailures {
				trip(breaker.ConsecutiveFailures, "")
				return false
			}
		}
	}
	if r := m.rateReason(now); r != breaker.NoReason {
		trip(r, "")
		return false
	}
	if m.cfg.ReadyToTrip == nil {
		return false
	}
	ready, panicked := m.readyToTrip(now)
	if ready {
		trip(breaker.ReadyToTrip, "")
	}
	return panicked
}

// readyToTrip asks Config.ReadyToTrip with the counts of the window at
// now; a panic means no trip.
func (m *model) readyToTrip(now time.Duration) (ready, panicked bool) {
	c := breaker.Counts{ConsecutiveFailures: m.consecutive}
	for _, call := range m.window(now) {
		c.Calls++
		if call.failed {
			c.Failures++
		}
		if call.slow {
			c.SlowCalls++
		}
	}
	if c.Calls > 0 {
		c.FailureRate = float64(c.Failures) / float64(c.Calls)
		c.SlowCallRate = float64(c.SlowCalls) / float64(c.Calls)
	}
	defer func() {
		if recover() != nil {
			ready, panicked = false, true
		}
	}()
	return m.cfg.ReadyToTrip(c), false
}

// window returns the calls the sliding window holds at now.
func (m *model) window(now time.Duration) []modelCall {
	if m.cfg.WindowDuration == 0 {
		return m.calls[max(0, len(m.calls)-m.cfg.WindowSize):]
	}
	width := m.cfg.WindowDuration / time.Duration(m.cfg.WindowBuckets)
	oldest := now/width - time.Duration(m.cfg.WindowBuckets) + 1
	var in []modelCall
	for _, c := range m.calls {
		if c.at/width >= oldest {
			in = append(in, c)
		}
	}
	return in
}

func (m *model) rateReason(now time.Duration) breaker.Reason {
	if m.cfg.FailureRate == 0 && m.cfg.SlowCallRate == 0 {
		return breaker.NoReason
	}
	w := m.window(now)
	var failed, slow int
	for _, c := range w {
		if c.failed {
			failed++
		}
		if c.slow {
			slow++
		}
	}
	// The documented comparison: the share as a float64 against the rate.
	reached := func(n int, rate float64) bool {
		return rate > 0 && float64(n)/float64(len(w)) >= rate
	}
	switch {
	case len(w) < m.cfg.MinimumCalls:
		return breaker.NoReason
	case reached(failed, m.cfg.FailureRate):
		return breaker.FailureRate
	case reached(slow, m.cfg.SlowCallRate):
		return breaker.SlowCallRate
	}
	return breaker.NoReason
}

func (m *model) Reject(p modelPermit, r breaker.Reason) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p.period != m.period {
		return
	}
	switch m.state {
	case breaker.Closed:
		m.attempts = 1
		m.moveTo(breaker.Open, r, "")
	case breaker.HalfOpen:
		m.moveTo(breaker.Open, breaker.ProbeDeferred, "")
	}
}

func (m *model) Trip(r breaker.Reason) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.state == breaker.Closed || m.state == breaker.HalfOpen {
		m.attempts = 1
		m.moveTo(breaker.Open, r, "")
	}
}

func (m *model) Reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.state == breaker.Closed {
		// No transition, but a fresh period: earlier permits are late.
		m.period++
		m.resetCounts()
		return
	}
	m.moveTo(breaker.Closed, breaker.Manual, "")
}

func (m *model) override(s breaker.State) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.state != s {
		m.moveTo(s, breaker.Manual, "")
		if s == breaker.ForcedOpen {
			m.until = 1<<63 - 1
		}
	}
}

func (m *model) Drained() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.state != breaker.Open || m.reason != breaker.QueueFull {
		return false
	}
	m.moveTo(breaker.Closed, breaker.QueueDrained, "")
	return true
}
