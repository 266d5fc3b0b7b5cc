package executor

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
)

// Busy describes a busy refusal: the bulkhead was full of young calls.
type Busy struct {
	Supplier   string
	Time       time.Time
	Slots      int           // the bulkhead's slots, all held
	Queued     int           // calls waiting in the (full) queue
	StuckAfter time.Duration // the age that would have made the bulkhead stuck
}

// busy refuses a call that found the bulkhead full but not stuck: only
// this call fails, with ErrBusy; the breaker is untouched (the closed
// breaker's permit needs no release).
func (ex *Executor) busy() error {
	ex.leave()
	return ex.refuseBusy()
}

// refuseBusy is busy for a call that was never counted in (see admit).
func (ex *Executor) refuseBusy() error {
	err := ex.reject(RejectedBusy)
	if ex.counts().crit.Now().OnBusy != nil {
		bs := ex.bh.Stats()
		ex.tellBusy(Busy{Supplier: ex.name, Time: time.Now(), Slots: bs.Slots, Queued: bs.Queued,
			StuckAfter: time.Duration(ex.stuckAfter())})
	}
	return err
}

// tellBusy calls Config.OnBusy; a panic in it is the listener's problem,
// not the caller's.
func (ex *Executor) tellBusy(b Busy) {
	_, _ = breaker.Guard("Config.OnBusy", func() (struct{}, error) { ex.counts().crit.Now().OnBusy(b); return struct{}{}, nil }, nil)
}

// LogBusy returns an OnBusy listener that logs busy refusals with l (nil:
// slog.Default()) at most once per supplier and interval (0: 1 s), with
// the count since the last record. It forgets a supplier quiet for an
// interval (logging the refusals it held back), so its memory follows the
// suppliers refused recently, not all there were. Safe for concurrent use.
func LogBusy(l *slog.Logger, interval time.Duration) func(Busy) {
	if l == nil {
		l = slog.Default()
	}
	if interval <= 0 {
		interval = time.Second
	}
	type state struct {
		last    time.Time
		pending int
		held    Busy // the newest refusal held back, while pending > 0
	}
	var (
		mu    sync.Mutex
		seen  = map[string]*state{}
		swept time.Time // the last time seen was swept
	)
	record := func(b Busy, n int) {
		l.LogAttrs(context.Background(), slog.LevelInfo, "fusebox: bulkhead busy, calls refused",
			slog.String("supplier", b.Supplier), slog.Int("refused", n), slog.Int("slots", b.Slots),
			slog.Int("queued", b.Queued), slog.Duration("stuck_after", b.StuckAfter))
	}
	return func(b Busy) {
		var flush []*state
		mu.Lock()
		s := seen[b.Supplier]
		if s == nil {
			// A new name: at most once an interval, forget the suppliers
			// quiet for one (a Group's names come and go), flushing what
			// they held back.
			if b.Time.Sub(swept) >= interval {
				swept = b.Time
				for name, q := range seen {
					if b.Time.Sub(q.last) >= interval {
						if q.pending > 0 {
							flush = append(flush, q)
						}
						delete(seen, name)
					}
				}
			}
			s = &state{}
			seen[b.Supplier] = s
		}
		s.pending++
		logNow := s.last.IsZero() || b.Time.Sub(s.last) >= interval
		n := s.pending
		if logNow {
			s.last, s.pending = b.Time, 0
		} else {
			s.held = b
		}
		mu.Unlock()
		for _, q := range flush {
			record(q.held, q.pending)
		}
		if logNow {
			record(b, n)
		}
	}
}
