package overload

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Request is one request of a load: its path, headers and the class its
// outcome is counted in ("" for none).
type Request struct {
	Path   string
	Header http.Header
	Class  string
}

// Load is an open-loop load: requests sent at Rate per second for Dur,
// whatever the answers, each with Deadline.
type Load struct {
	Base     string // http://127.0.0.1:port
	Rate     float64
	Dur      time.Duration
	Deadline time.Duration
	MaxOpen  int                               // requests open at once at most; beyond, one is counted as not sent
	Next     func(r *rand.Rand, i int) Request // nil: GET /work
	Seed     uint64
	Trace    bool // stamp each request's send time and read the server's stamps (TraceOuter)
}

// Tally counts the outcomes of a load, or of one class of its requests.
type Tally struct {
	Sent, Good, Shed, Late, Failed, NotSent int
	NoAnswer                                int             // of Late: no answer at all by the deadline
	latencies                               []time.Duration // of the good ones
	Splits                                  splits          // of the good ones, with Load.Trace
}

// P99 returns the 99th percentile latency of the good requests.
func (t *Tally) P99() time.Duration {
	if len(t.latencies) == 0 {
		return 0
	}
	sort.Slice(t.latencies, func(i, j int) bool { return t.latencies[i] < t.latencies[j] })
	return t.latencies[len(t.latencies)*99/100]
}

// Result is a load's tally, whole and by class, and its length.
type Result struct {
	All     Tally
	ByClass map[string]*Tally
	Dur     time.Duration
}

// Client returns the HTTP client of a load: enough connections for every
// open request, no compression.
func Client() *http.Client {
	return &http.Client{Transport: &http.Transport{
		DialContext:         (&net.Dialer{Timeout: time.Second}).DialContext,
		MaxIdleConns:        20000,
		MaxIdleConnsPerHost: 20000,
		IdleConnTimeout:     30 * time.Second,
		DisableCompression:  true,
	}}
}

// Run sends the load and waits for every answer (at most Deadline after
// the last request).
func (l Load) Run(ctx context.Context, c *http.Client) Result {
	rng := rand.New(rand.NewPCG(l.Seed, 1))
	var (
		mu   sync.Mutex
		res  = Result{ByClass: map[string]*Tally{}, Dur: l.Dur}
		wg   sync.WaitGroup
		open atomic.Int64
	)
	record := func(class string, f func(t *Tally)) {
		mu.Lock()
		defer mu.Unlock()
		f(&res.All)
		if class != "" {
			t := res.ByClass[class]
			if t == nil {
				t = &Tally{}
				res.ByClass[class] = t
			}
			f(t)
		}
	}
	start := time.Now()
	n := int(l.Rate * l.Dur.Seconds())
	for i := 0; i < n && ctx.Err() == nil; i++ {
		// A constant rate on an absolute schedule, so that a late send
		// does not slow the load (open loop).
		at := start.Add(time.Duration(float64(i) / l.Rate * float64(time.Second)))
		if d := time.Until(at); d > 0 {
			time.Sleep(d)
		}
		req := Request{Path: "/work"}
		if l.Next != nil {
			req = l.Next(rng, i)
		}
		if l.MaxOpen > 0 && open.Load() >= int64(l.MaxOpen) {
			record(req.Class, func(t *Tally) { t.Sent++; t.NotSent++ })
			continue
		}
		open.Add(1)
		wg.Go(func() {
			defer open.Add(-1)
			code, took, sp, err := l.send(ctx, c, req)
			if sp != nil {
				sp.At = at.Sub(start)
			}
			record(req.Class, func(t *Tally) {
				t.Sent++
				switch {
				case err == nil && code == http.StatusOK && took <= l.Deadline:
					t.Good++
					t.latencies = append(t.latencies, took)
					if sp != nil {
						t.Splits = append(t.Splits, *sp)
					}
				case err == nil && code == http.StatusOK:
					t.Late++
				case err == nil && (code == http.StatusServiceUnavailable || code == http.StatusTooManyRequests):
					t.Shed++
				case errors.Is(err, context.DeadlineExceeded):
					t.Late++
					t.NoAnswer++
				default:
					t.Failed++
				}
			})
		})
	}
	wg.Wait()
	return res
}

func (l Load) send(ctx context.Context, c *http.Client, r Request) (int, time.Duration, *Split, error) {
	ctx, cancel := context.WithTimeout(ctx, l.Deadline)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, l.Base+r.Path, nil)
	if err != nil {
		return 0, 0, nil, err
	}
	for k, v := range r.Header {
		hr.Header[k] = v
	}
	start := time.Now()
	if l.Trace {
		hr.Header.Set(HeaderSent, strconv.FormatInt(start.UnixNano(), 10))
	}
	resp, err := c.Do(hr)
	if err != nil {
		return 0, time.Since(start), nil, err
	}
	got := time.Now()
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	var sp *Split
	if l.Trace {
		if s, ok := split(start, got, resp.Header); ok {
			sp = &s
		}
	}
	return resp.StatusCode, time.Since(start), sp, nil
}
