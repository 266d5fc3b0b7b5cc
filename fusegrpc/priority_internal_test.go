package fusegrpc

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"google.golang.org/grpc/metadata"

	"github.com/fusebox-go/fusebox/priority"
)

var (
	sinkCtx context.Context
	sinkMD  metadata.MD
)

// BenchmarkPriorityMetadata is what carrying a priority adds to an
// outbound call: a context lookup for Default; otherwise a context with
// a shared MD, or with a copy of the call's own metadata, none when that
// says so already. The floors are what any way through grpc's metadata
// API pays: a context value, and the copy that is its only read.
func BenchmarkPriorityMetadata(b *testing.B) {
	base := context.WithValue(context.Background(), struct{ k int }{1}, 1)
	withMD := metadata.AppendToOutgoingContext(base, "authorization", "Bearer x")
	saysSo := metadata.AppendToOutgoingContext(base, "authorization", "Bearer x", "fusebox-priority", "critical")
	for _, c := range []struct {
		name string
		ctx  context.Context
		p    priority.Priority
	}{
		{"default", base, priority.Default},
		{"critical", base, priority.Critical},
		{"critical+metadata", withMD, priority.Critical},
		{"critical+metadata-saying-so", saysSo, priority.Critical},
	} {
		ctx := priority.With(c.ctx, c.p)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkCtx = withPriority(ctx, "")
			}
		})
	}
	// The value as NewOutgoingContext stores it: an MD and a slice.
	v := struct {
		md    metadata.MD
		added [][]string
	}{md: priorityMD[priority.Critical]}
	b.Run("floor/context-value", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sinkCtx = context.WithValue(base, struct{ k int }{3}, v)
		}
	})
	b.Run("floor/read-of-metadata", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sinkMD, _ = metadata.FromOutgoingContext(withMD)
		}
	})
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

func TestWithPriorityMetadataThatSaysSoAlready(t *testing.T) {
	t.Run("is sent as it is, with no context of ours", func(t *testing.T) {
		ctx := metadata.AppendToOutgoingContext(context.Background(), "fusebox-priority", "critical", "authorization", "x")
		ctx = priority.With(ctx, priority.Critical)
		got := withPriority(ctx, "")
		assert.True(t, got == ctx, "got a new context, want the call's own")
		assert.Equal(t, metadata.Pairs("fusebox-priority", "critical", "authorization", "x"), outgoingMD(got))
	})
	t.Run("under a key of one's own, in any case", func(t *testing.T) {
		ctx := metadata.NewOutgoingContext(context.Background(), metadata.MD{"X-Criticality": {"sheddable"}})
		ctx = priority.With(ctx, priority.Sheddable)
		got := withPriority(ctx, "X-Criticality")
		assert.True(t, got == ctx, "got a new context, want the call's own")
		assert.Equal(t, metadata.Pairs("x-criticality", "sheddable"), outgoingMD(got))
	})
	t.Run("but not when it says so twice", func(t *testing.T) {
		ctx := metadata.AppendToOutgoingContext(context.Background(), "fusebox-priority", "critical")
		ctx = metadata.AppendToOutgoingContext(ctx, "fusebox-priority", "critical")
		got := withPriority(priority.With(ctx, priority.Critical), "")
		assert.Equal(t, metadata.Pairs("fusebox-priority", "critical"), outgoingMD(got))
	})
	t.Run("nor when it says so under another key", func(t *testing.T) {
		ctx := metadata.AppendToOutgoingContext(context.Background(), "fusebox-priority", "critical")
		got := withPriority(priority.With(ctx, priority.Critical), "x-criticality")
		assert.Equal(t, metadata.Pairs("fusebox-priority", "critical", "x-criticality", "critical"), outgoingMD(got))
	})
}

func TestWithPriorityLeavesTheCallersMetadataAsItWas(t *testing.T) {
	own := metadata.Pairs("fusebox-priority", "critical", "authorization", "x")
	ctx := metadata.NewOutgoingContext(context.Background(), own)
	ctx = metadata.AppendToOutgoingContext(ctx, "x-more", "1")
	got := withPriority(priority.With(ctx, priority.Sheddable), "")
	assert.Equal(t, metadata.Pairs("fusebox-priority", "sheddable", "authorization", "x", "x-more", "1"), outgoingMD(got))
	assert.Equal(t, metadata.Pairs("fusebox-priority", "critical", "authorization", "x"), own, "the caller's MD changed")
	assert.Equal(t, metadata.Pairs("fusebox-priority", "critical", "authorization", "x", "x-more", "1"), outgoingMD(ctx),
		"the caller's context changed")
}
