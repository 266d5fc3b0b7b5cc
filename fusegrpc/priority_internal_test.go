package fusegrpc

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"google.golang.org/grpc/metadata"

	"github.com/fusebox-go/fusebox/priority"
)

var sinkCtx context.Context

// BenchmarkPriorityMetadata is what carrying a priority adds to an
// outbound call: a context lookup for Default; otherwise a context with
// a shared MD, or with a copy of the call's own metadata.
func BenchmarkPriorityMetadata(b *testing.B) {
	base := context.WithValue(context.Background(), struct{ k int }{1}, 1)
	withMD := metadata.AppendToOutgoingContext(base, "authorization", "Bearer x")
	for _, c := range []struct {
		name string
		ctx  context.Context
		p    priority.Priority
	}{
		{"default", base, priority.Default},
		{"critical", base, priority.Critical},
		{"critical+metadata", withMD, priority.Critical},
	} {
		ctx := priority.With(c.ctx, c.p)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkCtx = withPriority(ctx, "")
			}
		})
	}
}

func TestWithPriorityMetadata(t *testing.T) {
	outgoing := func(ctx context.Context) metadata.MD {
		md, _ := metadata.FromOutgoingContext(ctx)
		return md
	}
	t.Run("a default call sends nothing", func(t *testing.T) {
		assert.Empty(t, outgoing(withPriority(context.Background(), "")))
	})
	t.Run("a critical call without metadata says so", func(t *testing.T) {
		ctx := withPriority(priority.With(context.Background(), priority.Critical), "")
		assert.Equal(t, metadata.Pairs("fusebox-priority", "critical"), outgoing(ctx))
	})
	t.Run("the metadata a call has goes along", func(t *testing.T) {
		ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "x")
		ctx = withPriority(priority.With(ctx, priority.Sheddable), "")
		assert.Equal(t, metadata.Pairs("fusebox-priority", "sheddable", "authorization", "x"), outgoing(ctx))
	})
	t.Run("metadata added after it is the call's own", func(t *testing.T) {
		ctx := withPriority(priority.With(context.Background(), priority.Critical), "")
		ctx = metadata.AppendToOutgoingContext(ctx, "x-more", "1")
		assert.Equal(t, metadata.Pairs("fusebox-priority", "critical", "x-more", "1"), outgoing(ctx))
	})
	t.Run("under a key of one's own", func(t *testing.T) {
		ctx := withPriority(priority.With(context.Background(), priority.Critical), "X-Criticality")
		assert.Equal(t, metadata.Pairs("x-criticality", "critical"), outgoing(ctx))
	})
}

func TestWithPriorityMetadataIsTheCallsOwn(t *testing.T) {
	t.Run("a priority the call's metadata says otherwise is replaced", func(t *testing.T) {
		ctx := metadata.AppendToOutgoingContext(context.Background(), "fusebox-priority", "critical")
		ctx = withPriority(priority.With(ctx, priority.Sheddable), "")
		assert.Equal(t, metadata.Pairs("fusebox-priority", "sheddable"), outgoingMD(ctx))
	})
	t.Run("under a key of one's own too", func(t *testing.T) {
		ctx := metadata.AppendToOutgoingContext(context.Background(), "x-criticality", "critical", "authorization", "x")
		ctx = withPriority(priority.With(ctx, priority.Sheddable), "X-Criticality")
		assert.Equal(t, metadata.Pairs("x-criticality", "sheddable", "authorization", "x"), outgoingMD(ctx))
	})
	t.Run("what a call adds or changes stays its own", func(t *testing.T) {
		ctx := withPriority(priority.With(context.Background(), priority.Critical), "")
		md, _ := metadata.FromOutgoingContext(ctx)
		md.Set("fusebox-priority", "sheddable")
		md.Set("x-leak", "1")
		_ = metadata.AppendToOutgoingContext(ctx, "x-more", "1")
		other := withPriority(priority.With(context.Background(), priority.Critical), "")
		assert.Equal(t, metadata.Pairs("fusebox-priority", "critical"), outgoingMD(other))
	})
}

func outgoingMD(ctx context.Context) metadata.MD {
	md, _ := metadata.FromOutgoingContext(ctx)
	return md
}
