package executor_test

import (
	"bytes"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

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
		assert.Contains(t, out, `level=WARN msg="fusebox: breaker open" supplier=payments from=closed to=open reason=consecutive-failures probe_at=`)
		assert.Contains(t, out, `level=INFO msg="fusebox: breaker half-open"`)
		assert.Contains(t, out, "reason=probe-failed")
		assert.Contains(t, out, "to=closed reason=probes-succeeded open_for=20s", "open_for spans the whole outage")
	})
}
