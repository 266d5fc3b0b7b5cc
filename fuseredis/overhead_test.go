package fuseredis_test

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/fusebox-go/fusebox/fuseredis"
)

// BenchmarkHookAlone measures the hook without a server: a command through
// ProcessHook onto a next that returns at once. It is the CPU the hook adds
// to every command.
func BenchmarkHookAlone(b *testing.B) {
	g, _ := testGroup(b)
	h := fuseredis.New(g, "127.0.0.1:6379")
	process := h.ProcessHook(func(ctx context.Context, cmd redis.Cmder) error {
		_ = ctx.Done() // go-redis's pool looks at it for every command
		_, _ = ctx.Deadline()
		return nil
	})
	ctx := context.Background()
	cmd := redis.NewStringCmd(ctx, "get", "k")
	b.ReportAllocs()
	for b.Loop() {
		if err := process(ctx, cmd); err != nil {
			b.Fatal(err)
		}
	}
}
