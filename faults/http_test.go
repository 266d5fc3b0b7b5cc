package faults_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusehttp"
)

// httpRig is a supplier behind Toxiproxy, called through fusehttp with the
// supplier name "payments".
type httpRig struct {
	sup    *supplier
	proxy  *toxi
	client *http.Client
	ex     *executor.Executor
	w      *watch
}

func newHTTPRig(t *testing.T) *httpRig {
	t.Helper()
	sup, addr := newSupplier(t)
	proxy := newToxi(t, addr)
	g, w := newGroup(t)
	return &httpRig{sup: sup, proxy: proxy, w: w, ex: payments(t, g),
		client: newHTTPClient(t, g, proxy.addr())}
}

// newHTTPClient calls addr through fusehttp, as the supplier "payments".
func newHTTPClient(t *testing.T, g *executor.Group, addr string) *http.Client {
	t.Helper()
	base := &http.Transport{MaxIdleConnsPerHost: workers}
	t.Cleanup(base.CloseIdleConnections)
	return &http.Client{Transport: &fusehttp.Transport{Group: g, Base: base,
		Names: map[string]string{addr: "payments"}}}
}

func payments(t *testing.T, g *executor.Group) *executor.Executor {
	t.Helper()
	ex, err := g.Executor("payments")
	require.NoError(t, err)
	return ex
}

// httpCall is one request of the load; it reads the whole body and names
// the outcome.
func httpCall(client *http.Client, url string) func(context.Context) string {
	return func(ctx context.Context) string {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return "bad request"
		}
		resp, err := client.Do(req)
		if err != nil {
			return outcome(err)
		}
		defer resp.Body.Close()
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			return "body " + outcome(err)
		}
		if resp.StatusCode != http.StatusOK {
			return resp.Status
		}
		return "ok"
	}
}

func outcome(err error) string {
	switch {
	case errors.Is(err, breaker.ErrOpen):
		return "open"
	case errors.Is(err, executor.ErrSaturated):
		return "saturated"
	case errors.Is(err, executor.ErrBusy):
		return "busy" // young calls held every slot: refused, not failed
	case errors.Is(err, executor.ErrTimeout):
		// Also a body cut off at the invocation deadline: the lease's
		// context ended under the read.
		return "timeout"
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline" // the caller's own
	}
	return "failed"
}

// awaitOK waits until the load has seen n successful calls in all.
func awaitOK(t *testing.T, l *load, n int64) {
	t.Helper()
	awaitOutcome(t, l, "ok", n)
}

// awaitOutcome waits until the load has seen n calls end with outcome.
func awaitOutcome(t *testing.T, l *load, outcome string, n int64) {
	t.Helper()
	awaitChange(t, &l.ended, func() bool { return l.get(outcome) >= n }, func() {
		t.Fatalf("only %d calls %q within %v: %v", l.get(outcome), outcome, wait, l.snapshot())
	})
}

// awaitHit waits until the supplier has seen a request beyond the n-th.
func awaitHit(t *testing.T, s *supplier, n int64) {
	t.Helper()
	awaitChange(t, &s.hit, func() bool { return s.hits.Load() > n }, func() {
		t.Fatalf("no request reached the supplier within %v", wait)
	})
}

// After the fault, the load stops, every call ends, and the supplier's
// slots are all free again with the breaker closed.
func (r *httpRig) requireRecovered(t *testing.T, l *load) {
	t.Helper()
	l.stop()
	requireAllFree(t, r.ex, r.w)
	requireClosed(t, r.ex)
	t.Logf("outcomes %v; transitions %v", l.snapshot(), describe(r.w.Events()))
}

// A black hole (the timeout toxic: the supplier gets the requests, its
// answers never arrive) fills the slots with calls that grow old: the
// first call that finds them all held trips the breaker, by saturation,
// long before the first call times out. Removing the toxic closes every
// connection through the proxy, the probe's too: the probe in flight fails
// at once with EOF and the breaker opens for another reset period; the
// probe after that closes it.
func TestHangTripsBySaturationAndTheProxyKillsTheProbe(t *testing.T) {
	t.Parallel()
	r := newHTTPRig(t)
	l := startLoad(t, httpCall(r.client, "http://"+r.proxy.addr()+"/"))
	awaitOK(t, l, 20)

	r.proxy.add(t, "timeout", map[string]any{"timeout": 0})
	start := time.Now()
	trip, before := r.w.until(t, breaker.Open)
	require.Empty(t, before, "transitions before the trip")
	assert.Equal(t, breaker.Saturation, trip.Reason, "the hang trips by saturation")
	assert.Less(t, trip.Time.Sub(start), invocationTimeout, "the hang trips before the first call can time out")
	t.Logf("tripped %v after the toxic", trip.Time.Sub(start).Round(time.Millisecond))

	// The probe reaches the supplier, and its answer is black-holed too.
	probe, _ := r.w.until(t, breaker.HalfOpen)
	hits := r.sup.hits.Load()
	awaitHit(t, r.sup, hits)
	removed := time.Now()
	r.proxy.remove(t, "timeout")
	reopen, _ := r.w.until(t, breaker.Open)
	assert.Equal(t, breaker.ProbeFailed, reopen.Reason, "the probe in flight when the proxy closes its connection")
	assert.NotErrorIs(t, reopen.Err, executor.ErrTimeout, "the probe fails when its connection closes, not at its deadline")
	assert.Less(t, reopen.Time.Sub(probe.Time), invocationTimeout, "the probe fails before its deadline")
	t.Logf("the probe failed %v after the toxic's removal: %v", reopen.Time.Sub(removed).Round(time.Millisecond), reopen.Err)

	closed, between := r.w.until(t, breaker.Closed)
	require.Len(t, between, 1, "one more probe closes the breaker: %v", describe(between))
	assert.Equal(t, breaker.ProbesSucceeded, closed.Reason)
	t.Logf("closed %v after the toxic's removal", closed.Time.Sub(removed).Round(time.Millisecond))
	r.requireRecovered(t, l)
}

// reset_peer makes every exchange fail at once (the connection reset as
// the answer arrives): the breaker trips on consecutive failures, not
// saturation, and closes after the fault with the first probe that finds
// the supplier healthy.
func TestResetPeerTripsOnConsecutiveFailures(t *testing.T) {
	t.Parallel()
	r := newHTTPRig(t)
	l := startLoad(t, httpCall(r.client, "http://"+r.proxy.addr()+"/"))
	awaitOK(t, l, 20)

	r.proxy.add(t, "reset_peer", map[string]any{"timeout": 0})
	start := time.Now()
	trip, before := r.w.until(t, breaker.Open)
	require.Empty(t, before, "transitions before the trip")
	assert.Equal(t, breaker.ConsecutiveFailures, trip.Reason, "resets trip on consecutive failures")
	assert.NotErrorIs(t, trip.Err, executor.ErrTimeout, "the failures are resets, not timeouts")
	assert.Less(t, trip.Time.Sub(start), invocationTimeout, "five resets come long before any timeout")
	t.Logf("tripped %v after the toxic: %v", trip.Time.Sub(start).Round(time.Millisecond), trip.Err)

	removed := time.Now()
	r.proxy.remove(t, "reset_peer")
	closed, between := r.w.until(t, breaker.Closed)
	assert.Equal(t, breaker.ProbesSucceeded, closed.Reason)
	t.Logf("closed %v after the toxic's removal, by way of %v", closed.Time.Sub(removed).Round(time.Millisecond), describe(between))
	r.requireRecovered(t, l)
}

// Latency with jitter (0 to 200 ms per answer) slows the supplier down but
// leaves nothing stuck: the breaker never trips.
func TestJitterNeverTrips(t *testing.T) {
	t.Parallel()
	r := newHTTPRig(t)
	l := startLoad(t, httpCall(r.client, "http://"+r.proxy.addr()+"/"))
	awaitOK(t, l, 20)

	r.proxy.add(t, "latency", map[string]any{"latency": 100, "jitter": 100})
	awaitOK(t, l, 20+60)
	r.proxy.remove(t, "latency")
	awaitOK(t, l, 20+60+10)

	l.stop()
	assert.Empty(t, describe(r.w.Events()), "transitions under jitter")
	assert.Zero(t, l.get("failed")+l.get("timeout")+l.get("open"), "calls that failed: %v", l.snapshot())
	r.requireRecovered(t, l)
}

// A body that trickles in (the bandwidth toxic: 64 KiB at 16 KB/s, four
// seconds, twice the invocation timeout) holds each slot after the
// response headers have arrived: the calls grow old reading, the breaker
// trips by saturation before the first body is cut off at the deadline
// (its reader gets context.DeadlineExceeded), and the cut-off bodies end
// their calls and free their slots. Removing the toxic hands the bytes it
// holds on at once: the calls still reading then succeed.
func TestSlowBodyTripsBySaturation(t *testing.T) {
	t.Parallel()
	r := newHTTPRig(t)
	l := startLoad(t, httpCall(r.client, "http://"+r.proxy.addr()+"/big"))
	awaitOK(t, l, 20)

	r.proxy.add(t, "bandwidth", map[string]any{"rate": 16})
	start := time.Now()
	trip, before := r.w.until(t, breaker.Open)
	require.Empty(t, before, "transitions before the trip")
	assert.Equal(t, breaker.Saturation, trip.Reason, "slow bodies trip by saturation")
	assert.Less(t, trip.Time.Sub(start), invocationTimeout, "before the first body is cut off")
	t.Logf("tripped %v after the toxic", trip.Time.Sub(start).Round(time.Millisecond))

	// The first bodies are cut off at their deadline, their calls end.
	awaitOutcome(t, l, "body timeout", 1)
	removed := time.Now()
	r.proxy.remove(t, "bandwidth")
	closed, between := r.w.until(t, breaker.Closed)
	assert.Equal(t, breaker.ProbesSucceeded, closed.Reason)
	t.Logf("closed %v after the toxic's removal, by way of %v", closed.Time.Sub(removed).Round(time.Millisecond), describe(between))
	r.requireRecovered(t, l)
}

// A supplier process stopped with SIGSTOP still has its socket: the kernel
// accepts connections and requests, and nothing answers. That is a hang,
// tripped by saturation; after SIGCONT the process answers again and the
// next probe closes the breaker.
func TestStoppedProcessTripsBySaturation(t *testing.T) {
	t.Parallel()
	c := startChild(t)
	g, w := newGroup(t)
	client := newHTTPClient(t, g, c.addr)
	ex := payments(t, g)
	l := startLoad(t, httpCall(client, "http://"+c.addr+"/"))
	awaitOK(t, l, 20)

	c.signal(t, syscall.SIGSTOP)
	start := time.Now()
	trip, before := w.until(t, breaker.Open)
	require.Empty(t, before, "transitions before the trip")
	assert.Equal(t, breaker.Saturation, trip.Reason, "a stopped process trips by saturation")
	assert.Less(t, trip.Time.Sub(start), invocationTimeout, "before the first call can time out")
	t.Logf("tripped %v after SIGSTOP", trip.Time.Sub(start).Round(time.Millisecond))

	c.signal(t, syscall.SIGCONT)
	resumed := time.Now()
	closed, between := w.until(t, breaker.Closed)
	assert.Equal(t, breaker.ProbesSucceeded, closed.Reason)
	t.Logf("closed %v after SIGCONT, by way of %v", closed.Time.Sub(resumed).Round(time.Millisecond), describe(between))
	l.stop()
	requireAllFree(t, ex, w)
	requireClosed(t, ex)
	t.Logf("outcomes %v", l.snapshot())
}
