package loadtest

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// errDeclined is the supplier's business refusal: a fast, well-formed answer
// ("card declined") from a healthy supplier.
var errDeclined = errors.New("loadtest: card declined")

// errSupplier is any other answer that is not a success.
var errSupplier = errors.New("loadtest: supplier error")

// supplier is the fake payment supplier. It answers after latency while
// healthy and hangs during the outage window: a call that arrives then waits
// until its context ends, even after the window closes, like a request stuck
// on a dead connection. It never answers on its own while hung, but it honours
// cancellation. Safe for concurrent use.
type supplier struct {
	clk         clock
	latency     time.Duration // scenario time
	outageStart time.Duration
	outageEnd   time.Duration
	declineRate float64
	rng         *rand.Rand // nil: decline evenly (every 1/declineRate-th call)
	rngMu       sync.Mutex

	calls    atomic.Int64 // calls answered by a healthy supplier
	hung     atomic.Int64 // calls hanging right now
	declined atomic.Int64
}

// inOutage reports whether a call arriving at scenario time t hangs.
func (s *supplier) inOutage(t time.Duration) bool {
	return t >= s.outageStart && t < s.outageEnd
}

// charge is one payment call.
func (s *supplier) charge(ctx context.Context) error {
	if s.inOutage(s.clk.now()) {
		s.hung.Add(1)
		defer s.hung.Add(-1)
		<-ctx.Done()
		return ctx.Err()
	}
	// A refusal takes as long as a payment (the supplier checks the card
	// either way), so outcomes reach the breaker in the order the calls
	// were made: a decline that answered at once would overtake the
	// successes still in flight, and runs of declines would look shorter.
	declined := s.declines(s.calls.Add(1))
	if !s.clk.sleep(ctx, s.latency) {
		return ctx.Err()
	}
	if declined {
		s.declined.Add(1)
		return errDeclined
	}
	return nil
}

// declines reports whether the n-th call (from 1) is a business refusal:
// at random with probability declineRate, or evenly.
func (s *supplier) declines(n int64) bool {
	if s.rng == nil || s.declineRate <= 0 {
		return declinesEvenly(n, s.declineRate)
	}
	s.rngMu.Lock()
	defer s.rngMu.Unlock()
	return s.rng.Float64() < s.declineRate
}

// declinesEvenly reports whether the n-th call (from 1) is a business
// refusal when exactly floor(n × rate) of the first n calls are, evenly
// spread.
func declinesEvenly(n int64, rate float64) bool {
	if rate <= 0 {
		return false
	}
	return int64(float64(n)*rate) > int64(float64(n-1)*rate)
}

// ServeHTTP answers GET /charge: 200 for a payment, 402 for a refusal; a hung
// call writes nothing until its client gives up.
func (s *supplier) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch err := s.charge(r.Context()); {
	case err == nil:
		w.WriteHeader(http.StatusOK)
	case errors.Is(err, errDeclined):
		w.WriteHeader(http.StatusPaymentRequired)
	default:
		// The client is gone (or the run is over): nobody reads this.
		w.WriteHeader(http.StatusServiceUnavailable)
	}
}

// chargeOverHTTP returns the shop's side of the supplier: a GET to url with
// client, mapped back to the errors of charge.
func chargeOverHTTP(client *http.Client, url string) func(context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err // wraps ctx.Err() when the timeout or the run ended it
		}
		drain(resp)
		switch resp.StatusCode {
		case http.StatusOK:
			return nil
		case http.StatusPaymentRequired:
			return errDeclined
		}
		return errSupplier
	}
}

// pacedSupplier is the supplier of the queue scenario: it completes calls at
// its service rate. Each of its lanes (one per call it runs at once) serves
// one call at a time, for service each. A call that arrives within one
// service time of its lane coming free starts when the lane came free: the
// round trip of the transport between two calls does not count against the
// supplier's rate. Over HTTP at speed 40 that round trip (a millisecond on a
// busy machine), stretched by the speed, would otherwise slow an 8/s supplier
// down to 6 or 7/s. In process the next call arrives the instant a lane comes
// free, so nothing changes. Safe for concurrent use.
type pacedSupplier struct {
	clk     clock
	service time.Duration // scenario time per call and lane
	mu      sync.Mutex
	free    []time.Duration // when each lane comes free
}

func newPacedSupplier(clk clock, lanes int, service time.Duration) *pacedSupplier {
	return &pacedSupplier{clk: clk, service: service, free: make([]time.Duration, lanes)}
}

// charge is one call: it returns when the call's lane has served it.
func (p *pacedSupplier) charge(ctx context.Context) error {
	now := p.clk.now()
	p.mu.Lock()
	lane := 0
	for i, f := range p.free {
		if f < p.free[lane] {
			lane = i
		}
	}
	start := max(now, p.free[lane])
	if gap := now - p.free[lane]; gap > 0 && gap <= p.service {
		start = p.free[lane]
	}
	done := start + p.service
	p.free[lane] = done
	p.mu.Unlock()
	if !p.clk.sleepUntil(ctx, done) {
		return ctx.Err()
	}
	return nil
}

// ServeHTTP answers GET /charge with 200 once the call is served.
func (p *pacedSupplier) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p.charge(r.Context()) != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusOK)
}
