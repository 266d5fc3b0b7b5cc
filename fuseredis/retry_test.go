package fuseredis_test

import (
	"context"
	"fmt"
	"runtime/debug"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/executor"
)

// A hung node (SIGSTOP) and go-redis's retries (MaxRetries 3, with a
// random back-off before each retry): a command and a pipeline still
// return by the invocation deadline, with the invocation timeout, because
// the back-off and the next try's waits end at that deadline. Two clients:
// go-redis's default back-off (8 to 512 ms) and a long one (100 ms to 1 s).
// The bound allows 100 ms for a loaded machine; without the cut, pipelines
// returned 150 to 170 ms late with the default back-off (go-redis v9.17.3).
func TestRetriesEndAtTheInvocationDeadline(t *testing.T) {
	t.Parallel()
	s := startRedis(t)
	const timeout = 300 * time.Millisecond
	const slack = 100 * time.Millisecond
	g, _ := testGroup(t, func(c *executor.Config) {
		c.InvocationTimeout = timeout
		c.Breaker.ConsecutiveFailures = 100
	})
	clients := map[string]*redis.Client{
		"default back-off": s.hooked(t, g, func(o *redis.Options) { o.MaxRetries = 0 }), // 0: go-redis's default, 3 retries
		"long back-off": s.hooked(t, g, func(o *redis.Options) {
			o.MaxRetries, o.MinRetryBackoff, o.MaxRetryBackoff = 0, 100*time.Millisecond, time.Second
		}),
	}
	maxBackoff := map[string]time.Duration{"default back-off": 512 * time.Millisecond, "long back-off": time.Second}
	ctx := context.Background()
	for _, c := range clients {
		require.NoError(t, c.Ping(ctx).Err())
	}

	s.freeze()
	defer s.thaw()
	for client, c := range clients {
		calls := map[string]func() error{
			"a command": func() error { return c.Get(ctx, "k").Err() },
			"a pipeline": func() error {
				cmds, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
					p.Get(ctx, "k")
					p.Incr(ctx, "n")
					return nil
				})
				for _, cmd := range cmds {
					assert.ErrorIs(t, cmd.Err(), executor.ErrTimeout, "a command of the pipeline: %v", cmd.Args())
				}
				return err
			},
		}
		for name, call := range calls {
			for i := range 3 {
				start := time.Now()
				err := call()
				took := time.Since(start)
				t.Logf("%s, %s, call %d: returned after %v", client, name, i, took)
				assert.ErrorIs(t, err, executor.ErrTimeout, "%s, %s", client, name)
				bound := timeout + slack
				if oldRedis() {
					// Before v9.17 a command's or a pipeline's first ask for
					// its context's Done may be in the back-off itself, which
					// then gets the caller's channel: up to one back-off late
					// (the pipeline with the default back-off was 231 and
					// 348 ms late at v9.0.0).
					bound += maxBackoff[client]
				}
				assert.LessOrEqual(t, took, bound, "%s, %s: returned %v after the invocation timeout", client, name, took-timeout)
			}
		}
	}
}

// oldRedis reports whether the go-redis the test runs with is older than
// v9.17 (the module requires v9.0.0; the workspace tests v9.17.3).
func oldRedis() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return true
	}
	for _, d := range bi.Deps {
		if d.Path == "github.com/redis/go-redis/v9" {
			v := d.Version
			if d.Replace != nil {
				v = d.Replace.Version
			}
			return semverLess(v, "v9.17.0")
		}
	}
	return true
}

// semverLess compares two v9.X.Y versions by their minor and patch.
func semverLess(a, b string) bool {
	var am, ap, bm, bp int
	fmt.Sscanf(a, "v9.%d.%d", &am, &ap)
	fmt.Sscanf(b, "v9.%d.%d", &bm, &bp)
	return am < bm || am == bm && ap < bp
}
