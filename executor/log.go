package executor

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
)

// LogTransitions returns a transition listener that logs every transition
// with l (nil: slog.Default()): at Warn when a supplier stops being called,
// at Info otherwise.
func LogTransitions(l *slog.Logger) func(breaker.Event) {
	if l == nil {
		l = slog.Default()
	}
	var mu sync.Mutex
	openedAt := map[string]time.Time{}
	return func(e breaker.Event) {
		attrs := []slog.Attr{
			slog.String("supplier", e.Name),
			slog.String("from", e.From.String()),
			slog.String("to", e.To.String()),
			slog.String("reason", e.Reason.String()),
		}
		if e.Kind != "" {
			attrs = append(attrs, slog.String("kind", e.Kind))
		}
		if e.Err != nil {
			attrs = append(attrs, slog.String("error", e.Err.Error()))
		}
		level := slog.LevelInfo
		mu.Lock()
		switch e.To {
		case breaker.Open, breaker.ForcedOpen:
			level = slog.LevelWarn
			if e.From != breaker.HalfOpen {
				openedAt[e.Name] = e.Time
			}
			if !e.OpenUntil.IsZero() {
				attrs = append(attrs, slog.Time("probe_at", e.OpenUntil))
			}
		case breaker.Closed, breaker.Disabled:
			if t, ok := openedAt[e.Name]; ok {
				attrs = append(attrs, slog.Float64("open_for_seconds", e.Time.Sub(t).Seconds()))
				delete(openedAt, e.Name)
			}
		}
		mu.Unlock()
		msg := "fusebox: breaker " + e.To.String()
		if e.Shadow {
			// Nothing is refused: say so where an operator reads "open".
			msg = "fusebox: shadow breaker " + e.To.String() + " (nothing refused)"
			attrs = append(attrs, slog.Bool("shadow", true))
		}
		l.LogAttrs(context.Background(), level, msg, attrs...)
	}
}
