package policy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// RetryConfig configures a Retrier. The zero value is 3 attempts, a back-off
// of 100 ms doubling up to 10 s with jitter, and the default Budget (10 %
// of the supplier's recent calls, plus 10 retries per 10 s).
type RetryConfig struct {
	// MaxAttempts is how many times a call is tried at most, the first
	// attempt included. 0: 3; 1: never retry.
	MaxAttempts int
	// Backoff is the wait before the first retry; each further retry waits
	// twice as long as the one before, up to MaxBackoff. Each wait is drawn
	// at random from the upper half of its value (jitter), so that callers
	// that failed together do not come back together. 0: 100 ms.
	Backoff time.Duration
	// MaxBackoff caps the exponential wait; any value works, up to
	// time.Duration's largest (no cap in practice). A Retry-After the
	// supplier gave (RetryAfterError) is honoured even when it is longer.
	// 0: 10 s.
	MaxBackoff time.Duration
	// Seed seeds the jitter, for reproducible runs. 0: a random seed.
	Seed uint64
	// Budget caps the retries per supplier. The zero value allows 10 % of
	// the supplier's recent calls plus 10 retries per 10 s.
	Budget Budget
	// Retryable narrows the errors that are retried: it is asked only
	// about errors the rules of Retry and RetryIdempotent allow, and a
	// false keeps the error. nil: retry all of them. It runs on the
	// caller's goroutine; a panic in it ends the call with a
	// *breaker.PanicError.
	Retryable func(error) bool
	// Logger gets a Debug line for each retry and each retry the budget
	// refused. nil: no logging. An error whose Error method panics (a
	// typed nil *T, say) is logged with the text of a *breaker.PanicError
	// naming "error.Error" instead: a log line is no reason to change
	// what the call does.
	Logger *slog.Logger
}

// RetryAfterError is an error that carries the supplier's own word on when
// to call it again (an HTTP 429 or 503 with Retry-After, a rejection that
// knows when its breaker closes). A retry waits at least RetryAfter; 0
// means the supplier did not say. RetryAfter runs on the caller's
// goroutine; a panic in it (or in an As or Unwrap method errors.As reaches
// to find it) ends the call with a *breaker.PanicError naming
// "RetryAfterError.RetryAfter", as a panic in RetryConfig.Retryable does:
// the error is not retried.
type RetryAfterError interface {
	error
	RetryAfter() time.Duration
}

// Retrier retries calls to suppliers through their executors, within a
// budget per supplier. Make one with NewRetrier and share it: the budget
// and the Stats of a supplier are those of every call that goes to it
// through this Retrier. A supplier's state (a few hundred bytes) is made at its
// first call and kept for the Retrier's life. Safe for concurrent use.
type Retrier struct {
	cfg       RetryConfig
	suppliers suppliers[retrySupplier]

	rngMu sync.Mutex
	rng   *rand.Rand
}

// retrySupplier is a Retrier's state for one supplier.
type retrySupplier struct {
	budget                                                  *budget
	calls, attempts, retries, refused, successes, ctx, open atomic.Uint64
}

// NewRetrier validates cfg and returns a Retrier, or an error naming the
// field that is wrong.
func NewRetrier(cfg RetryConfig) (*Retrier, error) {
	switch {
	case cfg.MaxAttempts < 0:
		return nil, fmt.Errorf("policy: RetryConfig.MaxAttempts must not be negative (0: 3), got %d", cfg.MaxAttempts)
	case cfg.Backoff < 0:
		return nil, fmt.Errorf("policy: RetryConfig.Backoff must not be negative (0: 100ms), got %v", cfg.Backoff)
	case cfg.MaxBackoff < 0:
		return nil, fmt.Errorf("policy: RetryConfig.MaxBackoff must not be negative (0: 10s), got %v", cfg.MaxBackoff)
	}
	if cfg.MaxAttempts == 0 {
		cfg.MaxAttempts = 3
	}
	if cfg.Backoff == 0 {
		cfg.Backoff = 100 * time.Millisecond
	}
	if cfg.MaxBackoff == 0 {
		cfg.MaxBackoff = max(10*time.Second, cfg.Backoff)
	}
	if cfg.MaxBackoff < cfg.Backoff {
		return nil, fmt.Errorf("policy: RetryConfig.MaxBackoff (%v) must not be below Backoff (%v)", cfg.MaxBackoff, cfg.Backoff)
	}
	b, err := cfg.Budget.withDefaults("RetryConfig.Budget", 0.1)
	if err != nil {
		return nil, err
	}
	cfg.Budget = b
	seed := cfg.Seed
	if seed == 0 {
		seed = rand.Uint64()
	}
	r := &Retrier{cfg: cfg, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	r.suppliers.make = func(string) *retrySupplier { return &retrySupplier{budget: newBudget(cfg.Budget)} }
	return r, nil
}

// Retry calls fn through ex (its breaker and bulkhead admit every attempt)
// and retries it after a failure, for calls that must not run twice when
// they may already have run once: an attempt that timed out (ErrTimeout)
// or was refused by a full bulkhead (ErrBusy, ErrSaturated) is not retried. Use
// RetryIdempotent for calls that may be repeated.
//
// Never retried: an open breaker (breaker.ErrOpen), a closed executor, a
// panic, and anything once ctx has ended. No retry is made into a breaker
// known to be open (the last attempt, or another caller, opened it and it
// is open past the back-off's end): it is neither waited for nor paid for.
// Between attempts Retry waits the jittered back-off, or the supplier's
// Retry-After if longer (RetryAfterError); a wait that would outlast ctx's
// deadline is not begun. A retry the supplier's budget refuses is not made.
// In each of these cases Retry returns the last attempt's error, the
// supplier's own; when ctx ends during a wait, ctx's error.
func Retry[T any](ctx context.Context, r *Retrier, ex *executor.Executor, fn func(context.Context) (T, error)) (T, error) {
	return retry(ctx, r, ex, false, fn)
}

// RetryIdempotent is Retry for calls that may run more than once with the
// effect of once (reads, puts of a whole value, calls with an idempotency
// key): an attempt that timed out or found the bulkhead full is retried
// too, within the same budget.
func RetryIdempotent[T any](ctx context.Context, r *Retrier, ex *executor.Executor, fn func(context.Context) (T, error)) (T, error) {
	return retry(ctx, r, ex, true, fn)
}

func retry[T any](ctx context.Context, r *Retrier, ex *executor.Executor, idempotent bool, fn func(context.Context) (T, error)) (T, error) {
	var zero T
	if err := badCall(ctx, "Retry", "Retrier", r == nil, r != nil && r.suppliers.make == nil, ex, fn == nil); err != nil {
		return zero, err
	}
	s := r.suppliers.get(ex.Name())
	s.calls.Add(1)
	s.budget.call()
	s.attempts.Add(1)
	v, err := executor.Do(ctx, ex, fn)
	if err == nil {
		s.successes.Add(1)
		return v, nil
	}
	for attempt := 1; ; attempt++ {
		if attempt >= r.cfg.MaxAttempts {
			return v, err
		}
		if ok, perr := r.retryable(ctx, err, idempotent); !ok {
			if perr != nil {
				return zero, perr
			}
			return v, err
		}
		wait, perr := r.wait(attempt, err)
		if perr != nil {
			return zero, perr
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			s.ctx.Add(1)
			return v, err // the wait alone would outlast the caller
		}
		// The attempt may just have opened the breaker: a retry that would
		// meet it still open is not waited for, nor paid for.
		if refuses(ex, time.Now().Add(wait)) {
			s.open.Add(1)
			return v, err
		}
		if s.budget.spend() != nil {
			s.refused.Add(1)
			r.log(ctx, "retry refused by the budget", ex.Name(), attempt, err, 0)
			return v, err
		}
		r.log(ctx, "retry", ex.Name(), attempt, err, wait)
		if err := sleep(ctx, wait); err != nil {
			s.ctx.Add(1)
			return zero, err
		}
		// Another caller may have opened it during the wait, or a half-open
		// breaker with its probe places taken refuses at Do (its own
		// *RejectedError, not an ErrOpen that fn returned). Either way the
		// supplier was not called: the budget gets the retry back, the
		// caller gets the supplier's last error rather than the refusal.
		if refuses(ex, time.Now()) {
			s.budget.refund()
			s.open.Add(1)
			return v, err
		}
		s.attempts.Add(1)
		s.retries.Add(1)
		nv, nerr := executor.Do(ctx, ex, fn)
		if re, ok := nerr.(*executor.RejectedError); ok && re.Reason == executor.RejectedOpen {
			s.budget.refund()
			s.open.Add(1)
			return v, err
		}
		v, err = nv, nerr
		if err == nil {
			s.successes.Add(1)
			return v, nil
		}
	}
}

// refuses reports whether ex's breaker is known to refuse a call made at
// t: forced open, or open until after t. In shadow mode nothing is
// refused.
func refuses(ex *executor.Executor, t time.Time) bool {
	st := ex.Stats()
	switch {
	case st.Shadow:
		return false
	case st.Breaker.State == breaker.ForcedOpen:
		return true
	default:
		return st.Breaker.State == breaker.Open && t.Before(st.Breaker.OpenUntil)
	}
}

// retryable applies the fixed rules, then cfg.Retryable; a panic in the
// latter is returned as perr.
func (r *Retrier) retryable(ctx context.Context, err error, idempotent bool) (ok bool, perr error) {
	switch {
	case ctx.Err() != nil,
		errors.Is(err, breaker.ErrOpen),
		errors.Is(err, executor.ErrClosed),
		errors.As(err, new(*breaker.PanicError)):
		return false, nil
	case errors.Is(err, executor.ErrSaturated), errors.Is(err, executor.ErrBusy), errors.Is(err, executor.ErrTimeout):
		if !idempotent {
			return false, nil
		}
	}
	if r.cfg.Retryable == nil {
		return true, nil
	}
	return breaker.Guard("RetryConfig.Retryable", func() (bool, error) { return r.cfg.Retryable(err), nil }, nil)
}

// wait is the back-off before retry number attempt (from 1): Backoff ×
// 2^(attempt−1), capped at MaxBackoff, drawn from its upper half, and at
// least the Retry-After err carries; a panic in the latter is returned as
// perr.
func (r *Retrier) wait(attempt int, err error) (d time.Duration, perr error) {
	d = r.cfg.Backoff
	for i := 1; i < attempt && d < r.cfg.MaxBackoff; i++ {
		// A wait above half the cap would double past it, and past
		// time.Duration's largest value for a cap near it (a negative
		// wait, and rand's panic on the caller's goroutine): it saturates
		// at the cap instead. The jitter's bound, d/2+1, cannot overflow.
		if d > r.cfg.MaxBackoff/2 {
			d = r.cfg.MaxBackoff
			break
		}
		d *= 2
	}
	r.rngMu.Lock()
	j := r.rng.Int64N(int64(d)/2 + 1)
	r.rngMu.Unlock()
	d = d/2 + time.Duration(j)
	after, perr := retryAfter(err)
	return max(d, after), perr
}

// retryAfter returns the Retry-After err carries, 0 if none. The method is
// the caller's code run on the caller's goroutine: its panic is returned
// as perr, as Retryable's is.
func retryAfter(err error) (time.Duration, error) {
	return breaker.Guard("RetryAfterError.RetryAfter", func() (time.Duration, error) {
		var ra RetryAfterError
		if errors.As(err, &ra) {
			return ra.RetryAfter(), nil
		}
		return 0, nil
	}, nil)
}

// errorText is err.Error() for a log line. The method is the caller's
// code: its panic is logged as the text of a *breaker.PanicError, and the
// call goes on as it would without a Logger.
func errorText(err error) string {
	text, perr := breaker.Guard("error.Error", func() (string, error) { return err.Error(), nil }, nil)
	if perr != nil {
		return perr.Error()
	}
	return text
}

func (r *Retrier) log(ctx context.Context, msg, supplier string, attempt int, err error, wait time.Duration) {
	l := r.cfg.Logger
	if l == nil || !l.Enabled(ctx, slog.LevelDebug) {
		return
	}
	attrs := []slog.Attr{slog.String("supplier", supplier), slog.Int("attempt", attempt), slog.String("error", errorText(err))}
	if wait > 0 {
		attrs = append(attrs, slog.Duration("wait", wait))
	}
	l.LogAttrs(ctx, slog.LevelDebug, "fusebox: "+msg, attrs...)
}

// RetryStats are a Retrier's counts for one supplier.
type RetryStats struct {
	Supplier string
	// Calls made through the Retrier, and those that ended in success.
	Calls, Successes uint64
	// Attempts submitted to the executor, first attempts included;
	// Retries are those after a first attempt.
	Attempts, Retries uint64
	// BudgetRefused counts the retries the budget refused: their calls
	// returned their last error.
	BudgetRefused uint64
	// CtxRefused counts the retries not made because the caller's context
	// ended, or would have ended during the back-off.
	CtxRefused uint64
	// OpenRefused counts the retries not made because the supplier's
	// breaker was open (or would still be at the back-off's end): their
	// calls returned their last error. A retry the breaker refused at
	// submission counts here and in Attempts and Retries.
	OpenRefused uint64
}

// Stats returns the counts of every supplier the Retrier has called, by
// supplier name (none for a nil Retrier).
func (r *Retrier) Stats() []RetryStats {
	if r == nil {
		return nil
	}
	var out []RetryStats
	r.suppliers.each(func(name string, s *retrySupplier) {
		out = append(out, RetryStats{
			Supplier: name, Calls: s.calls.Load(), Successes: s.successes.Load(),
			Attempts: s.attempts.Load(), Retries: s.retries.Load(),
			BudgetRefused: s.refused.Load(), CtxRefused: s.ctx.Load(), OpenRefused: s.open.Load(),
		})
	})
	return out
}

// sleep waits for d or until ctx ends, and then returns ctx's error.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// badCall reports a call with a missing argument, or with a policy that
// its constructor did not make (a zero Retrier or Hedger, which has no
// configuration to follow).
func badCall(ctx context.Context, what, policy string, noPolicy, unmade bool, ex *executor.Executor, noFn bool) error {
	switch {
	case ctx == nil:
		return fmt.Errorf("policy: %s with a nil context (use context.Background())", what)
	case noPolicy:
		return fmt.Errorf("policy: %s with a nil policy", what)
	case unmade:
		return fmt.Errorf("policy: %s with a zero %s (make it with New%s)", what, policy, policy)
	case ex == nil:
		return fmt.Errorf("policy: %s to a nil *executor.Executor", what)
	case ex.Name() == "": // every executor New makes has a name
		return fmt.Errorf("policy: %s to a zero executor.Executor (make it with executor.New or Group.Executor)", what)
	case noFn:
		return fmt.Errorf("policy: %s of a nil function", what)
	}
	return nil
}
