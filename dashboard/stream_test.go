package dashboard_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/dashboard"
)

// next returns the next event of w, failing if none comes within wait (of
// the bubble's fake time).
func next(t *testing.T, w *sseWriter, wait time.Duration) event {
	t.Helper()
	select {
	case e := <-w.events:
		return e
	case <-time.After(wait):
		t.Fatalf("no event within %v", wait)
		return event{}
	}
}

func decode(t *testing.T, e event) dashboard.Snapshot {
	t.Helper()
	var s dashboard.Snapshot
	require.NoError(t, json.Unmarshal([]byte(e.data), &s), e.data)
	return s
}

func TestStreamFramesAFullSnapshotThenUpdates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ex := newExecutor(t, "payments")
		h := newHandler(t, dashboard.Options{})
		h.Add(ex)
		w := newSSEWriter()
		_, cancel := stream(h, w)
		defer cancel()

		require.Equal(t, http.StatusOK, <-w.code)
		assert.Equal(t, "text/event-stream", w.Header().Get("Content-Type"))
		assert.Equal(t, "no-store", w.Header().Get("Cache-Control"))

		first := next(t, w, time.Millisecond)
		assert.Equal(t, "snapshot", first.name)
		assert.Equal(t, "2000", first.retry, "the browser reconnects 2 s after a break")
		s := decode(t, first)
		assert.True(t, s.Full)
		assert.Equal(t, strconv.FormatUint(s.Seq, 10), first.id)

		call(t, ex, 5, nil)
		for i := range 3 {
			e := next(t, w, 1100*time.Millisecond)
			assert.Equal(t, "update", e.name)
			u := decode(t, e)
			assert.False(t, u.Full)
			assert.Equal(t, s.Seq+uint64(i)+1, u.Seq)
			p := tile(t, u, "payments").Series
			require.Len(t, p.T, 1, "an update carries the newest point only")
			if i == 0 {
				assert.Equal(t, []float64{5}, p.Calls["success"])
			}
		}

		ex.Breaker().Trip(breaker.Manual)
		e := next(t, w, 1100*time.Millisecond)
		assert.Equal(t, "open", tile(t, decode(t, e), "payments").State, "a trip shows within one interval")
	})
}

func TestStreamsAreBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHandler(t, dashboard.Options{MaxClients: 2, MaxClientsPerAddress: 2})
		var cancels []func()
		for range 2 {
			w := newSSEWriter()
			_, cancel := stream(h, w)
			require.Equal(t, http.StatusOK, <-w.code)
			cancels = append(cancels, cancel)
		}
		w := do(h, http.MethodGet, "/api/events", "", nil)
		assert.Equal(t, http.StatusServiceUnavailable, w.Code)
		assert.Equal(t, "2", w.Header().Get("Retry-After"))
		assert.Contains(t, w.Body.String(), "MaxClients")

		cancels[0]()
		w2 := newSSEWriter()
		_, cancel := stream(h, w2)
		assert.Equal(t, http.StatusOK, <-w2.code, "a place that was freed can be taken again")
		cancel()
		cancels[1]()
	})
}

func TestOneAddressCannotTakeEveryStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHandler(t, dashboard.Options{MaxClients: 4}) // 2 per address
		from := func(addr string) (*sseWriter, func()) {
			w := newSSEWriter()
			_, cancel := streamFrom(h, w, addr)
			return w, cancel
		}
		var cancels []func()
		for range 2 {
			w, cancel := from("192.0.2.1:4000")
			require.Equal(t, http.StatusOK, <-w.code)
			cancels = append(cancels, cancel)
		}
		r := httptest.NewRequest(http.MethodGet, "/api/events", nil)
		r.RemoteAddr = "192.0.2.1:4001"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		assert.Equal(t, http.StatusServiceUnavailable, w.Code, "a third page from one address")
		assert.Contains(t, w.Body.String(), "MaxClientsPerAddress")

		w2, cancel := from("192.0.2.2:4000")
		assert.Equal(t, http.StatusOK, <-w2.code, "another address still gets a place")
		cancels = append(cancels, cancel)

		cancels[0]()
		w3, cancel := from("192.0.2.1:4002")
		assert.Equal(t, http.StatusOK, <-w3.code, "a place an address gave back can be taken again")
		cancels = append(cancels, cancel)
		for _, c := range cancels {
			c()
		}
	})
}

func TestEventRateIsBoundedByTheInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHandler(t, dashboard.Options{Interval: 500 * time.Millisecond})
		h.AddGroup(newGroup(t, "payments"))
		w := newSSEWriter()
		_, cancel := stream(h, w)
		<-w.code
		time.Sleep(10*time.Second + 100*time.Millisecond)
		cancel()
		assert.Len(t, w.events, 21, "the first event, then one per 500 ms for 10 s")
	})
}

func TestSlowStreamBlocksNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ex := newExecutor(t, "payments")
		h := newHandler(t, dashboard.Options{WriteTimeout: 5 * time.Second, MaxClients: 2, MaxClientsPerAddress: 2})
		h.Add(ex)

		// A browser that stops reading: its writes block until their
		// deadline, as on a socket whose buffer is full.
		slow := newSSEWriter()
		slow.block = make(chan struct{})
		slowDone, cancelSlow := stream(h, slow)
		defer cancelSlow()
		<-slow.code

		fast := newSSEWriter()
		_, cancelFast := stream(h, fast)
		defer cancelFast()
		<-fast.code
		next(t, fast, time.Millisecond)

		for i := range 8 {
			// Calls go on at full speed, and the healthy stream gets
			// every update, while the slow one is stuck in a write.
			start := time.Now()
			call(t, ex, 10, nil)
			require.Zero(t, time.Since(start), "calls never wait for the dashboard")
			e := next(t, fast, 1100*time.Millisecond)
			require.Equal(t, "update", e.name, "event %d", i)
		}
		select {
		case <-slowDone:
		default:
			t.Fatal("the stream stuck in a write for longer than WriteTimeout still runs")
		}
		// It left without holding anyone up, and its place is free.
		again := newSSEWriter()
		_, cancelAgain := stream(h, again)
		defer cancelAgain()
		assert.Equal(t, http.StatusOK, <-again.code)
	})
}

func TestSamplerRunsOnlyWhileAStreamIsOpen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHandler(t, dashboard.Options{})
		h.AddGroup(newGroup(t, "payments"))
		w := newSSEWriter()
		_, cancel := stream(h, w)
		<-w.code
		time.Sleep(3*time.Second + time.Millisecond)
		cancel()
		var last uint64
		for len(w.events) > 0 {
			last = decode(t, <-w.events).Seq
		}
		require.Equal(t, uint64(4), last)

		time.Sleep(10 * time.Second)
		synctest.Wait()
		assert.Equal(t, last+1, h.Snapshot().Seq, "nothing sampled while no stream was open")
	})
}

func TestCloseEndsStreams(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, err := dashboard.New(dashboard.Options{})
		require.NoError(t, err)
		w := newSSEWriter()
		done, cancel := stream(h, w)
		defer cancel()
		<-w.code
		<-w.events                         // the first snapshot: the stream waits for the next frame
		time.Sleep(500 * time.Millisecond) // half an interval: no frame yet

		// The stream's last step is to set the connection's write deadline
		// for the end of the body, WriteTimeout from now: set when Close
		// returns, so Close waited for it. Its goroutine then returns
		// without any time passing (it may not have yet, the moment Close
		// returns).
		require.NoError(t, h.Close(context.Background()))
		w.mu.Lock()
		deadline := w.deadline
		w.mu.Unlock()
		assert.Equal(t, time.Now().Add(10*time.Second), deadline, "Close returned before the stream ended: its write deadline is still the first event's")
		synctest.Wait()
		select {
		case <-done:
		default:
			t.Fatal("the stream's goroutine did not return after Close")
		}
		assert.Equal(t, http.StatusServiceUnavailable, do(h, http.MethodGet, "/api/events", "", nil).Code)
		assert.Equal(t, http.StatusOK, do(h, http.MethodGet, "/api/snapshot", "", nil).Code, "the snapshot still works")
		require.NoError(t, h.Close(context.Background()), "Close is idempotent")
	})
}

func TestCloseGivesUpWhenItsContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, err := dashboard.New(dashboard.Options{WriteTimeout: time.Minute})
		require.NoError(t, err)
		stuck := newSSEWriter()
		stuck.block = make(chan struct{})
		done, _ := stream(h, stuck)
		<-stuck.code

		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		require.ErrorIs(t, h.Close(ctx), context.DeadlineExceeded)
		close(stuck.block) // the write returns; the stream sees Close and ends
		<-done
		require.NoError(t, h.Close(context.Background()))
	})
}

// Over a real loopback connection the events arrive as the browser sees
// them: flushed one by one, framed by blank lines; and a server's
// WriteTimeout does not cut the stream, since each event sets its own
// write deadline.
func TestStreamOverLoopback(t *testing.T) {
	h := newHandler(t, dashboard.Options{Interval: 100 * time.Millisecond})
	h.AddGroup(newGroup(t, "payments"))
	srv := httptest.NewUnstartedServer(h)
	srv.Config.WriteTimeout = 250 * time.Millisecond
	srv.Start()
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/api/events", nil)
	require.NoError(t, err)
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	// Each event is an update of the one before, or a snapshot where the
	// stream missed a frame: real time here, and on a loaded machine the
	// stream's goroutine can be held past an interval, when the sampler
	// replaces the frame it had not taken yet. The ids say which is due.
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	var names, want []string
	var last uint64
	for sc.Scan() && len(want) < 6 {
		if name, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
			names = append(names, name)
		}
		if v, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
			id, err := strconv.ParseUint(v, 10, 64)
			require.NoError(t, err)
			switch {
			case len(want) == 0:
				want = append(want, "snapshot")
			case id == last+1:
				want = append(want, "update")
			default:
				require.Greater(t, id, last, "ids go up")
				want = append(want, "snapshot")
			}
			last = id
		}
	}
	require.NoError(t, sc.Err())
	assert.Equal(t, want, names, "600 ms of events, past the server's 250 ms WriteTimeout")
	assert.Len(t, names, 6)
}

func TestHeadOfTheStreamReturnsAtOnce(t *testing.T) {
	h := newHandler(t, dashboard.Options{MaxClients: 1})
	w := do(h, http.MethodHead, "/api/events", "", nil)
	assert.Equal(t, http.StatusOK, w.Code)
	assert.Equal(t, "text/event-stream", w.Header().Get("Content-Type"))
	assert.Empty(t, w.Body.String())
}
