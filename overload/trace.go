package overload

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/fusebox-go/fusebox/priority"
	"github.com/fusebox-go/fusebox/shed"
)

// The trace headers: the client's send time on a request, and on a
// response the server's times (Unix nanoseconds, one host's clock) when
// the request reached its handler, passed the protection and was done.
const (
	HeaderSent   = "X-Trace-Sent"
	HeaderArrive = "X-Trace-Arrive"
	HeaderAllow  = "X-Trace-Allow"
	HeaderDone   = "X-Trace-Done"
)

// Trace classes, from a request's headers: critical (X-Priority), the
// quiet tenants (X-Tenant quiet-*), the noisy one, and the rest.
const (
	traceOther = iota
	traceCritical
	traceQuiet
	traceNoisy
	traceClasses
)

var traceNames = [traceClasses]string{"other", "critical", "quiet", "noisy"}

// TraceCount is what a traced server saw of one class of requests.
type TraceCount struct {
	Arrived   uint64               // reached the handler, before the protection
	ArrivedLt uint64               // of those, already past the client's deadline
	Refused   [shed.Reasons]uint64 // refused by the fusebox shedder, by shed.Reason (index 0 unused)
	Admitted  uint64               // passed the protection
	DoneLate  uint64               // admitted, done after the client's deadline
}

// tracing is on in a server process started to be traced (EnableTrace).
var tracing atomic.Bool

// EnableTrace makes Stack wrap its handler in TraceOuter and TraceInner,
// and the fusebox subject count its refusals by class and reason
// (TraceCounts). Call it before Stack.
func EnableTrace() { tracing.Store(true) }

// traced counts the requests of a traced server by class.
var traced struct {
	arrived, arrivedLate, admitted, doneLate [traceClasses]atomic.Uint64
	refused                                  [traceClasses][shed.Reasons]atomic.Uint64
}

// traceDeadline is the client's deadline the server compares with.
const traceDeadline = time.Second

func traceClass(r *http.Request) int {
	switch {
	case r.Header.Get("X-Priority") == "critical":
		return traceCritical
	case strings.HasPrefix(r.Header.Get("X-Tenant"), "quiet"):
		return traceQuiet
	case r.Header.Get("X-Tenant") == "noisy":
		return traceNoisy
	}
	return traceOther
}

// traceShed counts a refusal of the fusebox shedder (Config.OnShed).
func traceShed(e shed.Event) {
	c := traceOther
	switch {
	case e.Priority == priority.Critical:
		c = traceCritical
	case strings.HasPrefix(e.Key, "quiet"):
		c = traceQuiet
	case e.Key == "noisy":
		c = traceNoisy
	}
	traced.refused[c][e.Reason].Add(1)
}

// TraceCounts returns what the server process saw, by class name.
func TraceCounts() map[string]TraceCount {
	out := map[string]TraceCount{}
	for c := range traceClasses {
		t := TraceCount{
			Arrived:   traced.arrived[c].Load(),
			ArrivedLt: traced.arrivedLate[c].Load(),
			Admitted:  traced.admitted[c].Load(),
			DoneLate:  traced.doneLate[c].Load(),
		}
		for r := range t.Refused {
			t.Refused[r] = traced.refused[c][r].Load()
		}
		if t.Arrived > 0 {
			out[traceNames[c]] = t
		}
	}
	return out
}

// TraceOuter stamps and counts a request's arrival at the server's
// handler, before the protection; TraceInner, behind it, its admission
// and its end. Together they say where a request's time went.
func TraceOuter(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		c := traceClass(r)
		traced.arrived[c].Add(1)
		if sent := traceTime(r.Header.Get(HeaderSent)); !sent.IsZero() && now.Sub(sent) > traceDeadline {
			traced.arrivedLate[c].Add(1)
		}
		w.Header().Set(HeaderArrive, strconv.FormatInt(now.UnixNano(), 10))
		next.ServeHTTP(w, r)
	})
}

// TraceInner: see TraceOuter.
func TraceInner(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := traceClass(r)
		traced.admitted[c].Add(1)
		w.Header().Set(HeaderAllow, strconv.FormatInt(time.Now().UnixNano(), 10))
		next.ServeHTTP(&doneStamp{ResponseWriter: w}, r)
		if sent := traceTime(r.Header.Get(HeaderSent)); !sent.IsZero() && time.Since(sent) > traceDeadline {
			traced.doneLate[c].Add(1)
		}
	})
}

// doneStamp adds HeaderDone when the handler writes its header.
type doneStamp struct{ http.ResponseWriter }

func (d *doneStamp) WriteHeader(code int) {
	d.Header().Set(HeaderDone, strconv.FormatInt(time.Now().UnixNano(), 10))
	d.ResponseWriter.WriteHeader(code)
}

func traceTime(s string) time.Time {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// Split is where the time of a served request went: from the client's
// send to its arrival at the server's handler (connection, accept
// backlog, the connection's goroutine waiting for a CPU, the read),
// from there to the protection's admission, then to the handler's end,
// then back to the client.
type Split struct {
	ToServer, ToAllow, Handler, Back time.Duration
	At                               time.Duration // when it was sent, from the load's start
}

// Total is the request's time from its send to its answer.
func (s Split) Total() time.Duration { return s.ToServer + s.ToAllow + s.Handler + s.Back }

// P99After returns the p99 of the total time of the requests sent at
// least after from the load's start (the onset of an overload left out),
// and how many there were.
func (s splits) P99After(after time.Duration) (time.Duration, int) {
	var v []time.Duration
	for _, x := range s {
		if x.At >= after {
			v = append(v, x.Total())
		}
	}
	if len(v) == 0 {
		return 0, 0
	}
	slices.Sort(v)
	return v[len(v)*99/100], len(v)
}

// splits is the Splits of a tally's traced requests.
type splits []Split

// Quantile returns, for each part of the split, its q quantile over the
// requests (each part sorted on its own).
func (s splits) Quantile(q float64) Split {
	if len(s) == 0 {
		return Split{}
	}
	pick := func(f func(Split) time.Duration) time.Duration {
		v := make([]time.Duration, len(s))
		for i, x := range s {
			v[i] = f(x)
		}
		slices.Sort(v)
		return v[min(len(v)-1, int(q*float64(len(v))))]
	}
	return Split{
		ToServer: pick(func(x Split) time.Duration { return x.ToServer }),
		ToAllow:  pick(func(x Split) time.Duration { return x.ToAllow }),
		Handler:  pick(func(x Split) time.Duration { return x.Handler }),
		Back:     pick(func(x Split) time.Duration { return x.Back }),
	}
}

// split reads a traced response's stamps; ok is false without them.
func split(sent, got time.Time, h http.Header) (Split, bool) {
	a, l, d := traceTime(h.Get(HeaderArrive)), traceTime(h.Get(HeaderAllow)), traceTime(h.Get(HeaderDone))
	if a.IsZero() || l.IsZero() || d.IsZero() {
		return Split{}, false
	}
	return Split{ToServer: a.Sub(sent), ToAllow: l.Sub(a), Handler: d.Sub(l), Back: got.Sub(d)}, true
}
