package fuseotel_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fuseotel"
)

func TestAddSpanEvent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
		defer tp.Shutdown(context.Background())
		g, err := executor.NewGroup(executor.GroupConfig{Default: executor.Config{InvocationTimeout: time.Second}})
		require.NoError(t, err)
		defer g.Close(context.Background())

		ctx, span := tp.Tracer("test").Start(context.Background(), "checkout")
		_, err = executor.DoIn(ctx, g, "payments", func(ctx context.Context) (int, error) {
			<-ctx.Done() // hangs: times out
			return 0, ctx.Err()
		})
		assert.True(t, fuseotel.AddSpanEvent(ctx, err))
		ex, _ := g.Lookup("payments")
		ex.Breaker().Trip(breaker.Manual)
		_, err = executor.DoIn(ctx, g, "payments", func(context.Context) (int, error) { return 1, nil })
		assert.True(t, fuseotel.AddSpanEvent(ctx, err))
		assert.False(t, fuseotel.AddSpanEvent(ctx, errors.New("declined")), "the supplier's own error")
		assert.False(t, fuseotel.AddSpanEvent(ctx, nil))
		span.End()

		assert.False(t, fuseotel.AddSpanEvent(context.Background(), err), "no span, no event")

		spans := rec.Ended()
		require.Len(t, spans, 1)
		events := spans[0].Events()
		require.Len(t, events, 2)
		assert.Equal(t, "fusebox.timeout", events[0].Name)
		assert.Equal(t, []attribute.KeyValue{attribute.Bool("queue", false)}, events[0].Attributes)
		assert.Equal(t, "fusebox.rejected", events[1].Name)
		assert.Equal(t, []attribute.KeyValue{attribute.String("supplier", "payments"), attribute.String("reason", "open")}, events[1].Attributes)
	})
}
