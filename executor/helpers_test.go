package executor_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/future"
)

var errBoom = errors.New("boom")

// resultNow returns the result of f without waiting: Await with a context that
// has ended returns a complete future's result, and that context's error
// (context.Canceled) for a pending one.
func resultNow[T any](f *future.Future[T]) (T, error) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return f.Await(ctx)
}

// newExecutor makes an executor that the test closes at its end (inside the
// synctest bubble when called from one).
func newExecutor(t *testing.T, cfg executor.Config) *executor.Executor {
	t.Helper()
	ex, err := executor.New("payments", cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		require.NoError(t, ex.Close(ctx))
	})
	return ex
}

// supplier is a fake downstream service whose behaviour the test switches.
// While hung, a cooperative call waits for its context; a stubborn one
// ignores it and waits for unhang.
type supplier struct {
	mu      sync.Mutex
	hung    bool
	gate    chan struct{} // closed by unhang
	entered atomic.Int64  // calls that reached the supplier
	inside  atomic.Int64  // calls inside right now
	maxIn   atomic.Int64  // most calls inside at once
	fail    atomic.Bool   // a healthy supplier answers with errBoom
}

func newSupplier() *supplier { return &supplier{gate: make(chan struct{})} }

func (s *supplier) hang() {
	s.mu.Lock()
	s.hung, s.gate = true, make(chan struct{})
	s.mu.Unlock()
}

func (s *supplier) unhang() {
	s.mu.Lock()
	if s.hung {
		s.hung = false
		close(s.gate)
	}
	s.mu.Unlock()
}

func (s *supplier) enter() (hung bool, gate chan struct{}) {
	s.entered.Add(1)
	n := s.inside.Add(1)
	for {
		m := s.maxIn.Load()
		if n <= m || s.maxIn.CompareAndSwap(m, n) {
			break
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hung, s.gate
}

// cooperative honours its context while hung.
func (s *supplier) cooperative(ctx context.Context) (string, error) {
	defer s.inside.Add(-1)
	hung, gate := s.enter()
	if hung {
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-gate:
		}
	}
	if s.fail.Load() {
		return "", errBoom
	}
	return "ok", nil
}

// stubborn ignores its context while hung.
func (s *supplier) stubborn(context.Context) (string, error) {
	defer s.inside.Add(-1)
	hung, gate := s.enter()
	if hung {
		<-gate
	}
	if s.fail.Load() {
		return "", errBoom
	}
	return "ok", nil
}

type events struct {
	mu  sync.Mutex
	all []breaker.Event
}

func (e *events) listen(ev breaker.Event) {
	e.mu.Lock()
	e.all = append(e.all, ev)
	e.mu.Unlock()
}

func (e *events) list() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, ev := range e.all {
		out = append(out, ev.From.String()+">"+ev.To.String()+":"+ev.Reason.String())
	}
	return out
}

func (e *events) count(to breaker.State, r breaker.Reason) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, ev := range e.all {
		if ev.To == to && ev.Reason == r {
			n++
		}
	}
	return n
}
