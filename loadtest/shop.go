package loadtest

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// kind is the kind of a shop request.
type kind uint8

const (
	kindCatalog kind = iota // never touches the supplier
	kindPayment             // calls the supplier
)

// path is the shop's URL path for the kind.
func (k kind) path() string {
	if k == kindCatalog {
		return "/catalog"
	}
	return "/pay"
}

// outcome is how one shop request ended.
type outcome uint8

const (
	outServed     outcome = iota // catalog answered
	outRefused                   // no free shop worker: refused at once
	outPaid                      // payment succeeded
	outDeclined                  // the supplier refused the payment (business error)
	outTimedOut                  // the payment call hit its timeout
	outFailedFast                // the breaker (or the bulkhead) refused the call
	outError                     // anything else (a transport error)
	outCancelled                 // still running when the run ended
	outBusy                      // the bulkhead was full of young calls: refused alone, breaker untouched
	numOutcomes
)

var outcomeNames = [numOutcomes]string{"served", "refused", "paid", "declined", "timed-out", "failed-fast", "error", "cancelled", "busy"}

func (o outcome) String() string { return outcomeNames[o] }

// parseOutcome reads an outcome name; unknown names are errors.
func parseOutcome(s string) outcome {
	for i, n := range outcomeNames {
		if n == s {
			return outcome(i)
		}
	}
	return outError
}

// httpStatus is the status code the shop answers an outcome with.
func (o outcome) httpStatus() int {
	switch o {
	case outServed, outPaid:
		return http.StatusOK
	case outDeclined:
		return http.StatusPaymentRequired
	case outTimedOut:
		return http.StatusGatewayTimeout
	case outRefused, outFailedFast, outBusy:
		return http.StatusServiceUnavailable
	}
	return http.StatusBadGateway
}

// shop has a fixed number of request workers. A request that finds none free
// is refused at once. Safe for concurrent use.
type shop struct {
	clk            clock
	workers        int64
	catalogLatency time.Duration
	pay            func(ctx context.Context) outcome
	rec            *recorder
	busy           atomic.Int64
}

// acquire takes a worker if one is free.
func (s *shop) acquire() bool {
	for {
		n := s.busy.Load()
		if n >= s.workers {
			s.rec.refused(s.clk.now())
			return false
		}
		if s.busy.CompareAndSwap(n, n+1) {
			s.rec.busy(s.clk.now(), int(n+1))
			return true
		}
	}
}

// serve handles one request on a worker.
func (s *shop) serve(ctx context.Context, k kind) outcome {
	if !s.acquire() {
		return outRefused
	}
	defer s.busy.Add(-1)
	if k == kindPayment {
		return s.pay(ctx)
	}
	if !s.clk.sleep(ctx, s.catalogLatency) {
		return outCancelled
	}
	return outServed
}

// ServeHTTP answers GET /catalog and GET /pay; the outcome is in the
// X-Outcome header.
func (s *shop) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var k kind
	switch r.URL.Path {
	case "/catalog":
		k = kindCatalog
	case "/pay":
		k = kindPayment
	default:
		http.NotFound(w, r)
		return
	}
	o := s.serve(r.Context(), k)
	w.Header().Set("X-Outcome", o.String())
	w.WriteHeader(o.httpStatus())
}

// protection is one mode's way of making the payment call.
type protection struct {
	pay   func(ctx context.Context) outcome
	state func() breaker.State // nil without a breaker
	close func(ctx context.Context) error
	// refusals are the executor's refusals so far (shadow mode: what it
	// would have refused); nil without an executor.
	refusals func() executor.Rejections
}

// breakerConfig is the breaker of the breaker and fusebox modes, its
// durations converted to wall time by clk.
func (c ExhaustionConfig) breakerConfig(clk clock, onTransition func(breaker.Event)) breaker.Config {
	return breaker.Config{
		Name:                "payments",
		ConsecutiveFailures: c.Threshold,
		ResetTimeout:        clk.wall(c.ResetTimeout),
		Classify:            classify(c.BusinessErrorsFail),
		OnTransition:        onTransition,
	}
}

// executorConfig is the executor of the fusebox mode, its durations
// converted to wall time by clk.
func (c ExhaustionConfig) executorConfig(clk clock, onTransition func(breaker.Event)) executor.Config {
	return executor.Config{
		Slots:             c.Bulkhead,
		Queue:             c.Queue,
		QueueTimeout:      clk.wall(c.QueueTimeout),
		InvocationTimeout: clk.wall(c.InvocationTimeout),
		Breaker:           c.breakerConfig(clk, onTransition),
		Stuck:             stuckConfig(clk, false),
	}
}

// newProtection builds mode's protection around charge, its timeouts
// converted to wall time by clk. Breaker transitions go to onTransition.
func newProtection(mode Mode, cfg ExhaustionConfig, clk clock, charge func(context.Context) error, onTransition func(breaker.Event)) (*protection, error) {
	timeout := clk.wall(cfg.InvocationTimeout)
	withTimeout := func(ctx context.Context) error {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		return charge(cctx)
	}
	switch mode {
	case ModeTimeout:
		return &protection{
			pay:   func(ctx context.Context) outcome { return payOutcome(ctx, withTimeout(ctx)) },
			close: func(context.Context) error { return nil },
		}, nil
	case ModeBreaker:
		br, err := breaker.New(cfg.breakerConfig(clk, onTransition))
		if err != nil {
			return nil, err
		}
		return &protection{
			pay: func(ctx context.Context) outcome {
				p, err := br.Allow()
				if err != nil {
					return outFailedFast
				}
				err = withTimeout(ctx)
				p.Done(err)
				return payOutcome(ctx, err)
			},
			state: br.State,
			close: func(context.Context) error { return nil },
		}, nil
	case ModeFusebox, ModeShadow:
		ecfg := cfg.executorConfig(clk, onTransition)
		ecfg.Shadow = mode == ModeShadow
		ex, err := executor.New("payments", ecfg)
		if err != nil {
			return nil, err
		}
		if cfg.OnExecutor != nil {
			cfg.OnExecutor(ex)
		}
		call := func(ctx context.Context) (struct{}, error) { return struct{}{}, charge(ctx) }
		return &protection{
			pay: func(ctx context.Context) outcome {
				if cfg.onPayment != nil {
					cfg.onPayment(clk.now())
				}
				_, err := executor.Do(ctx, ex, call)
				return payOutcome(ctx, err)
			},
			state: ex.Breaker().State,
			close: ex.Close,
			refusals: func() executor.Rejections {
				st := ex.Stats()
				if st.Shadow {
					return st.Shadowed
				}
				return st.Rejected
			},
		}, nil
	}
	return nil, errors.New("loadtest: unknown mode " + string(mode))
}

// classify counts business refusals as failures or successes; everything
// else as the breaker's default does.
func classify(businessFails bool) func(error) breaker.Outcome {
	return func(err error) breaker.Outcome {
		if errors.Is(err, errDeclined) {
			if businessFails {
				return breaker.Failure
			}
			return breaker.Success
		}
		return breaker.DefaultClassify(err)
	}
}

// payOutcome maps the payment call's error to an outcome; ctx is the
// request's, whose end means the run ended.
func payOutcome(ctx context.Context, err error) outcome {
	switch {
	case err == nil:
		return outPaid
	case errors.Is(err, errDeclined):
		return outDeclined
	case ctx.Err() != nil:
		return outCancelled
	case isBusy(err):
		return outBusy
	case errors.Is(err, breaker.ErrOpen), errors.Is(err, executor.ErrSaturated):
		return outFailedFast
	case errors.Is(err, context.DeadlineExceeded): // executor.ErrTimeout matches too
		return outTimedOut
	}
	return outError
}

// isBusy reports whether err is the executor's busy refusal.
func isBusy(err error) bool {
	var rej *executor.RejectedError
	return errors.As(err, &rej) && rej.Reason == executor.RejectedBusy
}
