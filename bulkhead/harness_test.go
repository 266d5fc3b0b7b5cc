package bulkhead_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/fusebox-go/fusebox/bulkhead"
)

// config and stats are short names for the tests below.
type (
	config = bulkhead.Config
	stats  = bulkhead.Stats
)

// task is what the executor's Runner starts.
type task interface{ Run() }

// goPool starts each task with a go statement, as the executor does, and
// lets a test wait for all of them.
type goPool struct{ wg sync.WaitGroup }

func (p *goPool) Go(t task) error {
	p.wg.Go(t.Run)
	return nil
}

// Close waits until every task has returned.
func (p *goPool) Close(context.Context) error {
	p.wg.Wait()
	return nil
}

// harness drives a Bulkhead the way the executor does: admit, start the
// call on its own goroutine, and when the function returns, Release first
// (starting the waiter it hands over, if any), then report the result.
type harness struct {
	t    testing.TB
	b    *bulkhead.Bulkhead
	pool *goPool

	runs      atomic.Int64 // calls whose task started
	inFlight  atomic.Int64 // calls between slot taken and slot released
	overLimit atomic.Int64 // times inFlight exceeded the slots
	startErrs atomic.Int64 // Pool.Go failures
}

func newHarness(t testing.TB, cfg config) *harness {
	t.Helper()
	b, err := bulkhead.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, b: b, pool: &goPool{}}
}

// errPlanned is the error a call's function returns when asked to fail.
var errPlanned = errors.New("planned failure")

// call is one protected call, with the Waiter embedded so that queueing it
// allocates nothing. A call can be reused once done has been received or it
// was cancelled.
type call struct {
	bulkhead.Waiter
	h  *harness
	id int
	fn func() error // the protected function; it may panic

	err       error         // its result, a recovered panic included
	done      chan struct{} // receives one value per run, after Release
	cancelled atomic.Bool   // set when Cancel removed it: it must not run
	ran       atomic.Bool
}

func (h *harness) newCall(id int, fn func() error) *call {
	c := &call{h: h, id: id, fn: fn, done: make(chan struct{}, 1)}
	c.Value = c
	return c
}

// submit admits c and starts it if it got a slot.
func (h *harness) submit(c *call) bulkhead.Admission {
	adm := h.b.Admit(&c.Waiter)
	if adm == bulkhead.Acquired {
		h.start(c)
	}
	return adm
}

func (h *harness) start(c *call) {
	if err := h.pool.Go(c); err != nil {
		h.startErrs.Add(1)
		h.t.Errorf("Pool.Go: got %v, want nil", err)
	}
}

// Run is the task: it holds the slot while fn runs.
func (c *call) Run() {
	h := c.h
	if c.cancelled.Load() {
		h.t.Errorf("call %d ran after Cancel removed it", c.id)
	}
	c.ran.Store(true)
	h.runs.Add(1)
	if n := h.inFlight.Add(1); n > int64(h.b.Stats().Slots) {
		h.overLimit.Add(1)
	}
	c.err = c.protect()
	h.inFlight.Add(-1)
	// Release first, so the caller that learns the result and submits
	// again at once can never be refused because of its own slot.
	if next := h.b.Release(); next != nil {
		h.start(next.Value.(*call))
	}
	c.done <- struct{}{}
}

// protect runs fn, turning a panic into an error as the executor will.
func (c *call) protect() (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("panic: %v", v)
		}
	}()
	return c.fn()
}
