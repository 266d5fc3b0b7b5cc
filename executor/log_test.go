package executor_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

func TestLogTransitions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf bytes.Buffer
		log := executor.LogTransitions(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
		b, err := breaker.New(breaker.Config{Name: "payments", ConsecutiveFailures: 1, ResetTimeout: 10 * time.Second, OnTransition: log})
		assert.NoError(t, err)
		p, _ := b.Allow()
		p.Done(errBoom)
		time.Sleep(10 * time.Second)
		p, _ = b.Allow()
		p.Done(errBoom) // the probe fails: opened again, same outage
		time.Sleep(10 * time.Second)
		p, _ = b.Allow()
		p.Done(nil)
		out := buf.String()
		assert.Contains(t, out, `level=WARN msg="fusebox: breaker open" supplier=payments from=closed to=open reason=consecutive-failures error=boom probe_at=`)
		assert.Contains(t, out, `level=INFO msg="fusebox: breaker half-open"`)
		assert.Contains(t, out, "reason=probe-failed")
		assert.Contains(t, out, "to=closed reason=probes-succeeded open_for_seconds=20", "open_for spans the whole outage")
	})
}

func TestLogTransitionsInJSONGivesSeconds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf bytes.Buffer
		log := executor.LogTransitions(slog.New(slog.NewJSONHandler(&buf, nil)))
		b, err := breaker.New(breaker.Config{Name: "payments", ConsecutiveFailures: 1, ResetTimeout: 1500 * time.Millisecond, OnTransition: log})
		require.NoError(t, err)
		p, _ := b.Allow()
		p.Done(errBoom)
		time.Sleep(1500 * time.Millisecond)
		p, _ = b.Allow()
		p.Done(nil)
		lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
		require.Len(t, lines, 3)
		var closed map[string]any
		require.NoError(t, json.Unmarshal([]byte(lines[2]), &closed))
		assert.Equal(t, 1.5, closed["open_for_seconds"], "a float number of seconds, not nanoseconds")
		var opened map[string]any
		require.NoError(t, json.Unmarshal([]byte(lines[0]), &opened))
		assert.Equal(t, "boom", opened["error"])
	})
}
