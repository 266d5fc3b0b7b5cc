package browsertest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/dashboard"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fuseboxtest"
)

// suppliers is a fake downstream on 127.0.0.1 with one path per supplier.
// payments hangs while hung is set: the request waits until the caller
// gives up (or the outage ends).
type suppliers struct {
	mu    sync.Mutex
	hung  bool
	heal  chan struct{}  // closed when the outage ends
	calls map[string]int // by path
}

func (s *suppliers) hang() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hung, s.heal = true, make(chan struct{})
}

func (s *suppliers) recover() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hung {
		s.hung = false
		close(s.heal)
	}
}

func (s *suppliers) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.calls[r.URL.Path]++
	n, hung, heal := s.calls[r.URL.Path], s.hung, s.heal
	s.mu.Unlock()
	wait := func(d time.Duration) {
		select {
		case <-time.After(d):
		case <-r.Context().Done():
		}
	}
	switch r.URL.Path {
	case "/payments":
		if hung {
			select {
			case <-heal:
			case <-r.Context().Done():
				return
			}
		}
		wait(20 * time.Millisecond)
	case "/catalog", "/inventory":
		wait(15 * time.Millisecond)
	case "/recommendations":
		wait(60 * time.Millisecond)
		if n%25 == 0 {
			http.Error(w, "model reloading", http.StatusServiceUnavailable)
			return
		}
	case "/search":
		wait(30 * time.Millisecond)
		if n%12 == 0 {
			http.Error(w, "index busy", http.StatusInternalServerError)
			return
		}
	case "/shipping":
		wait(250 * time.Millisecond)
	default:
		http.NotFound(w, r)
		return
	}
	io.WriteString(w, "ok")
}

// service is the service under test: a Group of four suppliers called
// over loopback HTTP by a steady load, and the dashboard on its admin
// listener.
type service struct {
	sup      *suppliers
	group    *executor.Group
	dash     *dashboard.Handler
	admin    *http.Server
	adminURL string // the dashboard's page
	upstream *httptest.Server
	client   *http.Client

	transitions fuseboxtest.Recorder

	stop chan struct{}
	wg   sync.WaitGroup
}

// loads are the calls per second the service makes to each supplier.
var loads = map[string]int{"payments": 15, "catalog": 40, "search": 25, "shipping": 10, "inventory": 15, "recommendations": 12}

// maxRun bounds the load generator, whatever the test does.
const maxRun = 2 * time.Minute

func startService(t *testing.T) *service {
	t.Helper()
	s := &service{sup: &suppliers{calls: map[string]int{}}, stop: make(chan struct{})}
	s.upstream = httptest.NewServer(s.sup)
	s.client = s.upstream.Client()

	base := executor.Config{
		Slots:             8,
		InvocationTimeout: time.Second,
		Breaker:           breaker.Config{ConsecutiveFailures: 5, ResetTimeout: 2 * time.Second},
	}
	g, err := executor.NewGroup(executor.GroupConfig{
		Default: base,
		Suppliers: map[string]executor.Config{
			// Stuck calls hold their slots for up to 3 s; the first
			// probe goes 5 s after the trip.
			"payments": {Slots: 6, InvocationTimeout: 3 * time.Second, Breaker: breaker.Config{ResetTimeout: 10 * time.Second}},
			"shipping": {Slots: 3, Queue: 8, QueueTimeout: 500 * time.Millisecond, Breaker: breaker.Config{ResetTimeout: 3 * time.Second}},
		},
		OnTransition: s.transitions.Listen,
	})
	require.NoError(t, err)
	s.group = g

	s.startAdmin(t, "127.0.0.1:0", "shop")
	for name, rate := range loads {
		_, err := g.Executor(name)
		require.NoError(t, err)
		s.wg.Go(func() { s.load(name, rate) })
	}
	return s
}

// startAdmin serves a new dashboard of the group, titled title, on addr
// (the admin listener).
func (s *service) startAdmin(t *testing.T, addr, title string) {
	t.Helper()
	dash, err := dashboard.New(dashboard.Options{
		Title:        title,
		Interval:     500 * time.Millisecond,
		History:      60,
		AllowControl: true,
	})
	require.NoError(t, err)
	dash.AddGroup(s.group)
	mux := http.NewServeMux()
	mux.Handle("/fusebox/", http.StripPrefix("/fusebox", dash))
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	s.dash, s.admin = dash, &http.Server{Handler: mux}
	s.adminURL = "http://" + ln.Addr().String() + "/fusebox/"
	srv := s.admin
	s.wg.Go(func() { srv.Serve(ln) }) // until stopAdmin
}

// stopAdmin ends the dashboard's streams and its server, as a service
// shutting down does.
func (s *service) stopAdmin(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, s.dash.Close(ctx))
	require.NoError(t, s.admin.Shutdown(ctx))
}

// load calls the supplier name rate times a second until stop, without
// waiting for the answers (the executor bounds what is in flight).
func (s *service) load(name string, rate int) {
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	end := time.After(maxRun)
	url := s.upstream.URL + "/" + name
	for {
		select {
		case <-s.stop:
			return
		case <-end:
			return
		case <-tick.C:
		}
		executor.SubmitIn(context.Background(), s.group, name, func(ctx context.Context) (struct{}, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			if err != nil {
				return struct{}{}, err
			}
			resp, err := s.client.Do(req)
			if err != nil {
				return struct{}{}, err
			}
			defer resp.Body.Close()
			io.Copy(io.Discard, resp.Body)
			if resp.StatusCode != http.StatusOK {
				return struct{}{}, fmt.Errorf("%s: %s", name, resp.Status)
			}
			return struct{}{}, nil
		})
	}
}

// transition returns the first transition of supplier to state at or
// after since.
func (s *service) transition(supplier string, to breaker.State, since time.Time) (breaker.Event, bool) {
	for _, e := range s.transitions.Events() {
		if e.Name == supplier && e.To == to && !e.Time.Before(since) {
			return e, true
		}
	}
	return breaker.Event{}, false
}

// close stops the load, ends the outage, and closes everything in order.
func (s *service) close(t *testing.T) {
	close(s.stop)
	s.stopAdmin(t)
	s.wg.Wait()
	s.sup.recover()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.group.Close(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		t.Error(err)
	}
	s.upstream.Close()
}
