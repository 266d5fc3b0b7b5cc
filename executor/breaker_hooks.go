package executor

import (
	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/internal/hook"
)

// What the breaker lends the executor alone (see internal/hook). Package
// breaker is initialized before this one, so the hooks are set by now; a
// mismatch of types panics at start-up, in every test.
var (
	classify = hook.Classify.(func(*breaker.Breaker, error) (breaker.Outcome, error))
	record   = hook.Record.(func(breaker.Permit, breaker.Outcome, error) error)
	reject   = hook.Reject.(func(breaker.Permit, breaker.Reason))
	isProbe  = hook.Probe.(func(breaker.Permit) bool)
	drained  = hook.Drained.(func(*breaker.Breaker) bool)
	current  = hook.Current.(func(breaker.Permit) bool)
)
