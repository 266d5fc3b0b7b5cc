package shed

import (
	"context"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/priority"
)

// idle is a signal with no queue at all, and CPUs whose business is not
// known.
var idle = signal{wait: func() time.Duration { return 0 }}

// refusing sets the refusal probability of p to 1, as an overload's tick
// would; in a bubble no tick comes to undo it while the test runs.
func refusing(s *Shedder, p priority.Priority) { s.drop[p].Store(math.MaxUint64) }

func serve(h http.Handler, ctx context.Context) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil).WithContext(ctx))
	return w
}

func ok(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }

func TestHandler(t *testing.T) {
	t.Run("a refused request is answered 503 with Retry-After, without calling the handler", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s, err := newShedder(Config{RetryAfter: 1500 * time.Millisecond}, idle)
			require.NoError(t, err)
			defer s.Close()
			called := 0
			h := s.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { called++; ok(w, r) }), nil)
			refusing(s, priority.Default)
			w := serve(h, context.Background())
			assert.Equal(t, http.StatusServiceUnavailable, w.Code)
			assert.Equal(t, "2", w.Header().Get("Retry-After"), "1.5 s rounded up")
			assert.Zero(t, called)
			st := s.Stats()
			assert.Equal(t, uint64(1), st.Shed[priority.Default])
			assert.Equal(t, uint64(1), st.ByReason[Queue])
		})
	})
	t.Run("sheddable requests are refused while critical ones are served", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s, err := newShedder(Config{}, idle)
			require.NoError(t, err)
			defer s.Close()
			h := s.Handler(http.HandlerFunc(ok), nil)
			refusing(s, priority.Sheddable)
			assert.Equal(t, http.StatusServiceUnavailable, serve(h, priority.With(context.Background(), priority.Sheddable)).Code)
			assert.Equal(t, http.StatusOK, serve(h, priority.With(context.Background(), priority.Critical)).Code)
			assert.Equal(t, http.StatusOK, serve(h, context.Background()).Code)
			st := s.Stats()
			assert.Equal(t, uint64(2), st.Admitted)
			assert.Zero(t, st.InFlight, "every ticket done")
		})
	})
	t.Run("shadow mode reports the refusal and serves the request", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var got []Event
			s, err := newShedder(Config{Shadow: true, OnShed: func(e Event) { got = append(got, e) }}, idle)
			require.NoError(t, err)
			defer s.Close()
			h := s.Handler(http.HandlerFunc(ok), func(*http.Request) string { return "acme" })
			refusing(s, priority.Default)
			assert.Equal(t, http.StatusOK, serve(h, context.Background()).Code)
			assert.Equal(t, []Event{{Priority: priority.Default, Reason: Queue, Key: "acme", Shadow: true}}, got)
			st := s.Stats()
			assert.True(t, st.Shadow)
			assert.Equal(t, uint64(1), st.Shed[priority.Default])
			assert.Zero(t, st.InFlight)
		})
	})
	t.Run("a panic in OnShed is recovered and counted", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s, err := newShedder(Config{OnShed: func(Event) { panic("boom") }}, idle)
			require.NoError(t, err)
			defer s.Close()
			refusing(s, priority.Default)
			assert.Equal(t, http.StatusServiceUnavailable, serve(s.Handler(http.HandlerFunc(ok), nil), context.Background()).Code)
			assert.Equal(t, uint64(1), s.Stats().Panics)
		})
	})
	t.Run("a key function that panics is answered 500 and the handler is not called", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s, err := newShedder(Config{}, idle)
			require.NoError(t, err)
			defer s.Close()
			called := false
			h := s.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { called = true }),
				func(*http.Request) string { panic("no tenant") })
			assert.Equal(t, http.StatusInternalServerError, serve(h, context.Background()).Code)
			assert.False(t, called)
		})
	})
	t.Run("a handler that panics gives its place back", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s, err := newShedder(Config{}, idle)
			require.NoError(t, err)
			defer s.Close()
			h := s.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) }), nil)
			assert.Panics(t, func() { serve(h, context.Background()) })
			assert.Zero(t, s.Stats().InFlight)
		})
	})
}

func TestAllowAndClose(t *testing.T) {
	t.Run("a refusal is a *ShedError that matches ErrShed and allocates nothing", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s, err := newShedder(Config{}, idle)
			require.NoError(t, err)
			defer s.Close()
			refusing(s, priority.Default)
			_, err = s.Allow(priority.Default, "")
			require.ErrorIs(t, err, ErrShed)
			var se *ShedError
			require.True(t, errors.As(err, &se))
			assert.Equal(t, ShedError{Priority: priority.Default, Reason: Queue, RetryAfter: time.Second}, *se)
			assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = s.Allow(priority.Default, "") }))
		})
	})
	t.Run("a closed shedder admits everything, and Close is idempotent", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s, err := newShedder(Config{}, idle)
			require.NoError(t, err)
			refusing(s, priority.Default)
			require.NoError(t, s.Close())
			require.NoError(t, s.Close())
			tk, err := s.Allow(priority.Default, "")
			require.NoError(t, err)
			tk.Done()
			Ticket{}.Done() // the zero Ticket
		})
	})
	t.Run("the sampler runs every Interval and stops with Close", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			calls := 0
			s, err := newShedder(Config{Interval: time.Second}, signal{wait: func() time.Duration { calls++; return 0 }})
			require.NoError(t, err)
			time.Sleep(3500 * time.Millisecond)
			require.NoError(t, s.Close())
			assert.Equal(t, 3, calls)
			time.Sleep(time.Hour)
			assert.Equal(t, 3, calls, "no sampling after Close")
		})
	})
}

func TestConfigErrorsNameTheField(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Target: -1}, "Config.Target"},
		{Config{Interval: -time.Second}, "Config.Interval"},
		{Config{RetryAfter: -time.Second}, "Config.RetryAfter"},
		{Config{Tenants: -1}, "Config.Tenants"},
	} {
		_, err := New(c.cfg)
		require.Error(t, err)
		assert.Contains(t, err.Error(), c.want)
	}
}

func TestReasonNames(t *testing.T) {
	assert.Equal(t, "queue", Queue.String())
	assert.Equal(t, "limit", Limit.String())
	assert.Equal(t, "tenant", Tenant.String())
	assert.Equal(t, "Reason(9)", Reason(9).String())
}

func TestAnOverloadKeepsRefusingThroughAnIntervalWithoutArrivals(t *testing.T) {
	// In an overload the requests themselves wait for a CPU: an interval
	// may see none arrive, and the next ones must still be refused.
	synctest.Test(t, func(t *testing.T) {
		s, err := newShedder(Config{Interval: time.Hour}, idle) // ticks by hand
		require.NoError(t, err)
		defer s.Close()
		for range 2 { // two intervals: a standing queue
			for range 10 {
				_, err := s.Allow(priority.Default, "acme")
				require.NoError(t, err)
			}
			s.tick(time.Second, -1, 1) // 100 ms per request waiting for a CPU, nothing completed
		}
		_, err = s.Allow(priority.Default, "acme")
		require.ErrorIs(t, err, ErrShed, "refused once the overload has begun")
		s.tick(time.Second, -1, 1) // no arrivals but the refused one
		s.tick(time.Second, -1, 1) // none at all
		_, err = s.Allow(priority.Default, "acme")
		assert.ErrorIs(t, err, ErrShed, "refused after an interval without arrivals")
		_, err = s.Allow(priority.Sheddable, "")
		assert.ErrorIs(t, err, ErrShed, "a priority that sent nothing before is refused too")
	})
}
