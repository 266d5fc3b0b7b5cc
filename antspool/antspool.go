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
	"reflect"

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
// (ants.WithNonblocking(true)) or unbounded: a Runner must never block its
// caller, who is submitting a call, and a full blocking pool would hold
// it, past its own deadline, until a worker came free. A call the pool
// refuses (it is at its capacity, or released) ends with the pool's error,
// and the supplier's breaker ignores it: the supplier was never asked. The
// pool stays the program's to release, after the Group is closed.
//
// A nil pool, or a bounded pool made without ants.WithNonblocking(true),
// gives a Runner whose Go refuses every call with an error saying so: New
// returns no error, and an executor that crashed or hung on its calls
// would be worse.
func New(pool *ants.Pool) *Runner {
	switch {
	case pool == nil:
		return &Runner{err: errors.New("antspool: New was given a nil pool")}
	case blocks(pool):
		return &Runner{err: errors.New("antspool: New was given a pool that blocks when it is full: make it with ants.WithNonblocking(true)")}
	}
	return &Runner{pool: pool}
}

// blocks reports whether pool's Submit can wait for a worker: pool is
// bounded and was not made with ants.WithNonblocking(true). Both stay as
// they are for the pool's life (Tune keeps a bounded pool bounded), so New
// asks once. ants has no getter for its options, so blocks reads that one field with reflect,
// which may read an unexported field (never write it). Should a later
// ants lay its pool out otherwise, the field is not found and blocks
// reports false: the requirement is then the caller's alone, as it was
// before; the tests of this module, run with the ants it requires, catch
// such a change.
func blocks(pool *ants.Pool) bool {
	if pool.Cap() < 0 {
		return false // unbounded: Submit always starts a worker
	}
	v := reflect.ValueOf(pool)
	for _, name := range []string{"poolCommon", "options", "Nonblocking"} {
		if v.Kind() == reflect.Pointer && !v.IsNil() {
			v = v.Elem()
		}
		if v.Kind() != reflect.Struct {
			return false
		}
		if v = v.FieldByName(name); !v.IsValid() {
			return false
		}
	}
	return v.Kind() == reflect.Bool && !v.Bool()
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
