package executor_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"runtime"
	"strconv"
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

// LogBusy's memory follows the suppliers refused recently: a Group whose
// names come and go (idle eviction, per-host suppliers) must not make it
// remember every name it ever refused, nor lose the refusals it held back.
func TestLogBusyForgetsQuietSuppliers(t *testing.T) {
	t.Run("the refusals held back for a supplier that went quiet are logged", func(t *testing.T) {
		var buf bytes.Buffer
		logBusy := executor.LogBusy(slog.New(slog.NewTextHandler(&buf, nil)), time.Second)
		t0 := time.Unix(1000, 0)
		for i := range 3 {
			logBusy(executor.Busy{Supplier: "a", Time: t0.Add(time.Duration(i) * time.Millisecond), Slots: 4})
		}
		logBusy(executor.Busy{Supplier: "b", Time: t0.Add(2 * time.Second), Slots: 2})
		out := buf.String()
		assert.Equal(t, 3, strings.Count(out, "\n"), "a's first, a's two held back, b's first: %s", out)
		assert.Contains(t, out, "supplier=a refused=1 slots=4")
		assert.Contains(t, out, "supplier=a refused=2 slots=4")
		assert.Contains(t, out, "supplier=b refused=1 slots=2")
	})
	t.Run("a hundred thousand names refused one after another are not all kept", func(t *testing.T) {
		logBusy := executor.LogBusy(slog.New(slog.DiscardHandler), time.Second)
		pad := strings.Repeat("x", 200)
		t0 := time.Unix(1000, 0)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for i := range 100_000 {
			b := executor.Busy{Supplier: pad + strconv.Itoa(i), Time: t0.Add(time.Duration(i) * 2 * time.Second)}
			logBusy(b)
			logBusy(b) // held back: pending
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
		assert.Less(t, grew, int64(4<<20), "the heap grew by %d bytes", grew)
		runtime.KeepAlive(logBusy)
	})
}
