// Package antspool runs fusebox's calls on an ants pool
// (github.com/panjf2000/ants/v2) that the program already runs, so that
// they count against the same process-wide cap as its other work.
//
// Most programs do not need it: by default every admitted call runs on a
// goroutine of its own, which is cheaper (the runtime caches goroutines,
// and the bulkheads already bound each supplier's concurrency) and starts
// nothing at import. Importing ants starts its default pool's goroutines
// at program start; that is why this adapter lives in a module of its own.
//
//	pool, _ := ants.NewPool(10_000, ants.WithNonblocking(true))
//	g, _ := executor.NewGroup(executor.GroupConfig{Runner: antspool.New(pool)})
package antspool

import (
	"errors"
	"fmt"

	"github.com/panjf2000/ants/v2"

	"github.com/fusebox-go/fusebox/executor"
)

// Runner starts fusebox's calls on an ants pool. Make one with New: a zero
// Runner has no pool, and its Go refuses every call. It is safe for
// concurrent use.
type Runner struct {
	pool *ants.Pool
	err  error // why New could not use the pool; Go returns it for every call
}

// New returns a Runner for pool. The pool must be nonblocking
// (ants.WithNonblocking(true)): a Runner must never block its caller, who
// is submitting a call. A call the pool refuses (it is at its capacity, or
// released) ends with the pool's error, and the supplier's breaker ignores
// it: the supplier was never asked. The pool stays the program's to
// release, after the Group is closed.
//
// A nil pool gives a Runner whose Go refuses every call with an error
// saying so: New returns no error, and an executor that crashed on its
// first call would be worse.
func New(pool *ants.Pool) *Runner {
	if pool == nil {
		return &Runner{err: errors.New("antspool: New was given a nil pool")}
	}
	return &Runner{pool: pool}
}

// errUnmade is the error of Go on a Runner that New did not make.
var errUnmade = errors.New("antspool: a Runner must be made by antspool.New")

// Go submits fn to the pool.
func (r *Runner) Go(fn func()) error {
	switch {
	case r == nil:
		return errUnmade
	case r.err != nil:
		return r.err
	case r.pool == nil:
		return errUnmade
	}
	if err := r.pool.Submit(fn); err != nil {
		return fmt.Errorf("antspool: %w", err)
	}
	return nil
}

var _ executor.Runner = (*Runner)(nil)
