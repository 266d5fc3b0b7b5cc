package overload

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/go-kratos/aegis/ratelimit"
	"github.com/go-kratos/aegis/ratelimit/bbr"
	"github.com/zeromicro/go-zero/core/load"
	"github.com/zeromicro/go-zero/core/logx"

	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusehttp/inbound"
	"github.com/fusebox-go/fusebox/shed"
)

// Subjects are the protections compared, in the order of the table.
var Subjects = []string{"none", "bulkhead", "fusebox", "gozero", "gozero-1cpu", "kratos", "kratos-1cpu"}

// MoreSubjects are protections a run compares only when named: fusebox
// with a Target of 10 ms, half its default, for the latency it buys.
var MoreSubjects = []string{"fusebox-10ms"}

// SubjectNotes says what each subject is, for the table's legend.
var SubjectNotes = map[string]string{
	"none":         "no protection",
	"bulkhead":     "fusehttp/inbound, one route, executor defaults (10 slots)",
	"fusebox":      "shed.New(shed.Config{}), tenant key X-Tenant",
	"fusebox-10ms": "shed.New(shed.Config{Target: 10 * time.Millisecond}), tenant key X-Tenant",
	"gozero":       "load.NewAdaptiveShedder() (CPU threshold 900 per mille)",
	"gozero-1cpu":  "load.WithCpuThreshold(450): 900 per mille of the one CPU of two the server has",
	"kratos":       "bbr.NewLimiter() (CPU threshold 800 per mille)",
	"kratos-1cpu":  "bbr.WithCPUQuota(1): the CPU the process really has, as its docs say to set",
}

// shedder is the fusebox subject's Shedder, for ShedStats.
var shedder atomic.Pointer[shed.Shedder]

// ShedStats returns the Stats of the fusebox subject's Shedder, if this
// process protects with one.
func ShedStats() (shed.Stats, bool) {
	if s := shedder.Load(); s != nil {
		return s.Stats(), true
	}
	return shed.Stats{}, false
}

// Protect returns next behind the subject, and a func that releases what
// it started.
func Protect(subject string, next http.Handler) (http.Handler, func(), error) {
	switch subject {
	case "none":
		return next, func() {}, nil
	case "bulkhead":
		g, err := executor.NewGroup(executor.GroupConfig{})
		if err != nil {
			return nil, nil, err
		}
		h := inbound.Handler(next, inbound.Config{Group: g, Key: func(*http.Request) string { return "work" }})
		return h, func() { g.Close(context.Background()) }, nil
	case "fusebox", "fusebox-10ms":
		var cfg shed.Config
		if subject == "fusebox-10ms" {
			cfg.Target = 10 * time.Millisecond
		}
		if tracing.Load() {
			cfg.OnShed = traceShed
		}
		s, err := shed.New(cfg)
		if err != nil {
			return nil, nil, err
		}
		shedder.Store(s)
		return s.Handler(next, func(r *http.Request) string { return r.Header.Get("X-Tenant") }), func() { s.Close() }, nil
	case "gozero", "gozero-1cpu":
		load.DisableLog()
		logx.Disable() // its CPU statistics, printed every minute, would mix with our output
		var opts []load.ShedderOption
		if subject == "gozero-1cpu" {
			opts = append(opts, load.WithCpuThreshold(450))
		}
		return goZero(load.NewAdaptiveShedder(opts...), next), func() {}, nil
	case "kratos", "kratos-1cpu":
		var opts []bbr.Option
		if subject == "kratos-1cpu" {
			opts = append(opts, bbr.WithCPUQuota(1))
		}
		return kratos(bbr.NewLimiter(opts...), next), func() {}, nil
	}
	return nil, nil, fmt.Errorf("overload: unknown subject %q (want one of %v)", subject, Subjects)
}

// Stack is the handler a server process serves: next behind the
// subject's protection, with the priority of each request's X-Priority
// header (Priorities) set before the protection decides.
func Stack(subject string, next http.Handler) (http.Handler, func(), error) {
	if tracing.Load() {
		next = TraceInner(next)
	}
	h, release, err := protect(subject, next)
	if err != nil {
		return nil, nil, err
	}
	if tracing.Load() {
		return TraceOuter(Priorities(h)), release, nil
	}
	return Priorities(h), release, nil
}

// protect is Protect; a test puts a protection of its own in its place.
var protect = Protect

// goZero is go-zero's shedding middleware (rest/handler/sheddinghandler.go):
// a bare 503, a pass unless the handler answered 5xx.
func goZero(s load.Shedder, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := s.Allow()
		if err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		rec := &status{ResponseWriter: w, code: http.StatusOK}
		defer func() {
			if rec.code >= http.StatusInternalServerError {
				p.Fail()
			} else {
				p.Pass()
			}
		}()
		next.ServeHTTP(rec, r)
	})
}

// kratos is Kratos's rate-limit middleware around bbr: refused at once,
// done when the handler returns.
func kratos(l *bbr.BBR, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		done, err := l.Allow()
		if err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		defer done(ratelimit.DoneInfo{})
		next.ServeHTTP(w, r)
	})
}

type status struct {
	http.ResponseWriter
	code int
}

func (s *status) WriteHeader(code int) {
	s.code = code
	s.ResponseWriter.WriteHeader(code)
}
