package faults_test

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fuseboxtest"
)

// The settings every test runs the supplier with: small, so that a fault
// and its recovery take seconds. With the default stuck criterion a call
// is stuck after 500 ms (its floor, since the supplier answers in about a
// millisecond when healthy), a quarter of the invocation timeout: a hang
// trips the breaker about half a second in, long before the first call
// times out.
const (
	workers           = 4
	invocationTimeout = 2 * time.Second
	resetTimeout      = 2500 * time.Millisecond
	// every is the gap between two calls of the load (25 calls/s).
	every = 40 * time.Millisecond
	// wait bounds every wait for an event: generous, since it only
	// matters when a test is about to fail on a loaded machine.
	wait = 20 * time.Second
)

// newGroup makes the group of the supplier "payments" with the settings
// above; its breaker's transitions go to the returned watch.
func newGroup(t *testing.T) (*executor.Group, *watch) {
	t.Helper()
	w := &watch{}
	g, err := executor.NewGroup(executor.GroupConfig{
		Default: executor.Config{
			Slots:             workers,
			InvocationTimeout: invocationTimeout,
			Breaker:           breaker.Config{ResetTimeout: resetTimeout},
		},
		OnTransition: w.Listen,
		Runner:       w,
	})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		require.NoError(t, g.Close(ctx))
	})
	return g, w
}

// watch records a breaker's transitions, and runs the group's submitted
// calls (its Runner), announcing each that returned.
type watch struct {
	fuseboxtest.Recorder
	// returned changes when a submitted call's function has returned: by
	// then the executor has given its slot back.
	returned changes
}

// Go starts a call as the executor's default runner does, and announces
// its end.
func (w *watch) Go(fn func()) error {
	go func() {
		defer w.returned.notify()
		fn()
	}()
	return nil
}

// until waits for the next transition into state to, and returns it with
// the transitions it skipped on the way.
func (w *watch) until(t *testing.T, to breaker.State) (breaker.Event, []breaker.Event) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	var skipped []breaker.Event
	for {
		next, err := w.WaitForEvents(ctx, 1)
		if err != nil {
			t.Fatalf("no transition to %v within %v (saw %v): %v", to, wait, describe(skipped), err)
		}
		if next[0].To == to {
			return next[0], skipped
		}
		skipped = append(skipped, next[0])
	}
}

func describe(es []breaker.Event) []string {
	var s []string
	for _, e := range es {
		d := e.From.String() + "→" + e.To.String() + " (" + e.Reason.String()
		if e.Err != nil {
			d += ": " + e.Err.Error()
		}
		s = append(s, d+")")
	}
	return s
}

// toxi is a Toxiproxy proxy, run inside the test process, in front of a
// supplier's address.
type toxi struct {
	p *toxiproxy.Proxy
}

func newToxi(t *testing.T, upstream string) *toxi {
	t.Helper()
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	p := toxiproxy.NewProxy(srv, "supplier", "127.0.0.1:0", upstream)
	require.NoError(t, p.Start())
	t.Cleanup(p.Stop)
	return &toxi{p: p}
}

// addr is where clients connect.
func (x *toxi) addr() string { return x.p.Listen }

// add installs a toxic on the responses (downstream) of every connection,
// open or new.
func (x *toxi) add(t *testing.T, typ string, attrs map[string]any) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"name": typ, "type": typ, "stream": "downstream", "attributes": attrs})
	require.NoError(t, err)
	_, err = x.p.Toxics.AddToxicJson(bytes.NewReader(body))
	require.NoError(t, err)
}

// remove takes the toxic of that type away again. Toxiproxy does it link
// by link, and may take seconds: it hands each link's held data on, with
// up to 5 s for a link whose connection is gone.
func (x *toxi) remove(t *testing.T, typ string) {
	t.Helper()
	start := time.Now()
	require.NoError(t, x.p.Toxics.RemoveToxic(context.Background(), typ))
	t.Logf("removing the %s toxic took %v", typ, time.Since(start).Round(time.Millisecond))
}

// load calls the supplier every 40 ms, each call on its own goroutine, as
// independent requests of a service arrive, until stop; it counts the
// outcomes as the call function reports them.
type load struct {
	stopped chan struct{}
	wg      sync.WaitGroup
	counts  sync.Map // outcome name → *atomic.Int64
	ended   changes  // a call ended
}

// changes lets a test wait for the next change of something instead of
// sleeping between looks: next returns a channel that the next notify
// closes.
type changes struct {
	mu sync.Mutex
	ch chan struct{}
}

func (c *changes) next() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ch == nil {
		c.ch = make(chan struct{})
	}
	return c.ch
}

func (c *changes) notify() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ch != nil {
		close(c.ch)
		c.ch = nil
	}
}

// awaitChange waits, at most wait, until cond holds, looking again at each
// change of c; fail reports a timeout.
func awaitChange(t *testing.T, c *changes, cond func() bool, fail func()) {
	t.Helper()
	timeout := time.NewTimer(wait)
	defer timeout.Stop()
	for {
		next := c.next() // before the look: a change after it is not missed
		if cond() {
			return
		}
		select {
		case <-next:
		case <-timeout.C:
			fail()
			return
		}
	}
}

func startLoad(t *testing.T, call func(ctx context.Context) string) *load {
	t.Helper()
	l := &load{stopped: make(chan struct{})}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		tick := time.NewTicker(every)
		defer tick.Stop()
		// Bounded: a test stops its load long before (30 s at 25/s).
		for range 750 {
			select {
			case <-l.stopped:
				return
			case <-tick.C:
			}
			l.wg.Add(1)
			go func() {
				defer l.wg.Done()
				l.count(call(context.Background()))
			}()
		}
	}()
	t.Cleanup(l.stop)
	return l
}

func (l *load) count(outcome string) {
	n, _ := l.counts.LoadOrStore(outcome, new(atomic.Int64))
	n.(*atomic.Int64).Add(1)
	l.ended.notify()
}

// get returns how many calls ended with outcome.
func (l *load) get(outcome string) int64 {
	if n, ok := l.counts.Load(outcome); ok {
		return n.(*atomic.Int64).Load()
	}
	return 0
}

// snapshot returns every outcome's count, for a failure message or a log.
func (l *load) snapshot() map[string]int64 {
	m := map[string]int64{}
	l.counts.Range(func(k, v any) bool {
		m[k.(string)] = v.(*atomic.Int64).Load()
		return true
	})
	return m
}

// stop ends the load and waits for every call it made to return: each is
// bounded by the invocation timeout.
func (l *load) stop() {
	select {
	case <-l.stopped:
	default:
		close(l.stopped)
	}
	l.wg.Wait()
}

// requireAllFree waits until no slot of the supplier is held and no call is
// overdue: every call has ended and released its slot. It runs after the
// load has stopped: a lease (fusehttp) is given back before its call
// returns, and a submitted call (fusegrpc) whose caller stopped waiting at
// its deadline gives its slot back when its function returns, which w
// announces.
func requireAllFree(t *testing.T, ex *executor.Executor, w *watch) {
	t.Helper()
	var s executor.Stats
	awaitChange(t, &w.returned, func() bool {
		s = ex.Stats()
		return s.InUse == 0 && s.Free == s.Slots && s.Overdue == 0 && s.Queued == 0
	}, func() {
		t.Fatalf("slots still held %v after the calls ended: busy %d, free %d of %d, overdue %d", wait, s.InUse, s.Free, s.Slots, s.Overdue)
	})
}

// requireClosed checks that the supplier's breaker is closed.
func requireClosed(t *testing.T, ex *executor.Executor) {
	t.Helper()
	require.Equal(t, breaker.Closed, ex.Stats().Breaker.State, "the breaker after the fault")
}
