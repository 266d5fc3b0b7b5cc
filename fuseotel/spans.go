package fuseotel

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/fusebox-go/fusebox/executor"
)

// AddSpanEvent adds an event to the span in ctx when err says that fusebox
// refused a call or timed it out, so that a trace shows why a call to a
// supplier failed fast:
//
//	v, err := executor.DoIn(ctx, g, "payments", charge)
//	fuseotel.AddSpanEvent(ctx, err)
//
// The events are "fusebox.rejected" with the attributes supplier and
// reason (open, saturated, queue_full, closed), and "fusebox.timeout" for
// executor.ErrTimeout (queue: true for ErrQueueTimeout). It reports whether
// it added one; it adds nothing for other errors, or when ctx carries no
// span that records.
func AddSpanEvent(ctx context.Context, err error) bool {
	if err == nil {
		return false
	}
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return false
	}
	var rej *executor.RejectedError
	switch {
	case errors.As(err, &rej):
		span.AddEvent("fusebox.rejected", trace.WithAttributes(
			attribute.String("supplier", rej.Supplier),
			attribute.String("reason", snake(rej.Reason.String())),
		))
	case errors.Is(err, executor.ErrTimeout):
		span.AddEvent("fusebox.timeout", trace.WithAttributes(
			attribute.Bool("queue", errors.Is(err, executor.ErrQueueTimeout)),
		))
	default:
		return false
	}
	return true
}
