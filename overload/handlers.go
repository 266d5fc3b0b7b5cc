package overload

import (
	"math"
	"net/http"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/fusebox-go/fusebox/priority"
)

// Handler kinds.
const (
	NoYield = "noyield" // CPU work in one tight loop: never yields
	Yield   = "yield"   // the same work in slices with runtime.Gosched between
	Slow    = "slow"    // waits on a supplier: ?slow=1 for 2 s, else 20 ms; little CPU
)

// Work is the CPU one request of a CPU-bound handler costs.
const Work = 2 * time.Millisecond

// spinsPerMs is the loop count of one millisecond of CPU, measured by
// Calibrate.
var spinsPerMs atomic.Int64

var sink atomic.Uint64

// spin burns n loop iterations of CPU without a call or an allocation.
func spin(n int64) {
	x := uint64(1)
	for i := int64(0); i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	sink.Add(x & 1)
}

// Calibrate measures the spins of one millisecond (the best of several
// tries, as another process may take the CPU) and returns them.
func Calibrate() int64 {
	const n = 1 << 20
	best := time.Duration(math.MaxInt64)
	for range 20 {
		start := time.Now()
		spin(n)
		best = min(best, time.Since(start))
	}
	per := int64(float64(n) / (float64(best) / float64(time.Millisecond)))
	spinsPerMs.Store(per)
	return per
}

// Server is the handlers of one server process: the work endpoint under
// test, whose CPU cost a step can multiply.
type Server struct {
	Kind   string
	factor atomic.Int64 // the cost of a request, in Work units; 0 means 1
}

// SetFactor multiplies the CPU of each request by f from now on (a step
// of capacity: 2 halves it).
func (s *Server) SetFactor(f int64) { s.factor.Store(f) }

// ServeHTTP does the work of one request and answers 200.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f := max(s.factor.Load(), 1)
	spins := spinsPerMs.Load() * int64(Work/time.Millisecond) * f
	switch s.Kind {
	case NoYield:
		spin(spins)
	case Yield:
		const slices = 40 // about 50 us each
		for range slices {
			spin(spins / slices)
			runtime.Gosched()
		}
	case Slow:
		d := 20 * time.Millisecond
		if r.URL.Query().Get("slow") == "1" {
			d = 2 * time.Second
		}
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
		}
		spin(spinsPerMs.Load() / 10)
	}
	w.WriteHeader(http.StatusOK)
}

// Priorities marks each request with the priority of its X-Priority
// header. The load generator is trusted here; a real service believes
// such a header only from callers it trusts.
func Priorities(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p, err := priority.Parse(r.Header.Get("X-Priority")); err == nil && p != priority.Default {
			r = r.WithContext(priority.With(r.Context(), p))
		}
		next.ServeHTTP(w, r)
	})
}

// Admin serves the driver's controls: /admin/step?factor=N.
func Admin(s *Server) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, err := strconv.ParseInt(r.URL.Query().Get("factor"), 10, 64)
		if err != nil || f < 1 || f > 10 {
			http.Error(w, "factor: want 1 to 10", http.StatusBadRequest)
			return
		}
		s.SetFactor(f)
	})
}
