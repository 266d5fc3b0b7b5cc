package fuseredis_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// The cost of the hook, against a real redis-server on loopback. Two
// kinds of benchmark, both on one server and in the same run:
//
//   - BenchmarkRedis/go-redis/X (the baseline) and BenchmarkRedis/fuseredis/X
//     run command X plainly and through a fuseredis hook; make bench-redis
//     runs them in interleaved rounds and prints per-round ratios.
//   - BenchmarkInterleaved/X alternates the two clients command by command
//     and reports the ratio of their mean times ("fuseredis/go-redis"): both
//     see the same moment of a shared machine's noise.

// clients starts a server and returns a plain client of it and a hooked
// one, with the key "k" set.
func clients(b *testing.B) (plain, hooked *redis.Client) {
	s := startRedis(b)
	g, _ := testGroup(b)
	plain, hooked = s.plain(b), s.hooked(b, g)
	require.NoError(b, plain.Set(context.Background(), "k", "v", 0).Err())
	return plain, hooked
}

// ops are the measured operations.
var ops = []struct {
	name string
	run  func(ctx context.Context, c *redis.Client) error
}{
	{"GET", func(ctx context.Context, c *redis.Client) error { return c.Get(ctx, "k").Err() }},
	{"pipeline-10-GET", func(ctx context.Context, c *redis.Client) error {
		_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for range 10 {
				p.Get(ctx, "k")
			}
			return nil
		})
		return err
	}},
}

func BenchmarkRedis(b *testing.B) {
	ctx := context.Background()
	plain, hooked := clients(b)
	for _, c := range []struct {
		name string
		c    *redis.Client
	}{{"go-redis", plain}, {"fuseredis", hooked}} {
		for _, op := range ops {
			b.Run(c.name+"/"+op.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if err := op.run(ctx, c.c); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		b.Run(c.name+"/GET-parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := c.c.Get(ctx, "k").Err(); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

func BenchmarkInterleaved(b *testing.B) {
	ctx := context.Background()
	plain, hooked := clients(b)
	for _, op := range ops {
		b.Run(op.name, func(b *testing.B) {
			var tp, th time.Duration
			for i := 0; b.Loop(); i++ {
				// Alternate which goes first, so that neither always
				// meets a connection the other has just warmed.
				first, second, t1, t2 := plain, hooked, &tp, &th
				if i%2 == 1 {
					first, second, t1, t2 = hooked, plain, &th, &tp
				}
				start := time.Now()
				err1 := op.run(ctx, first)
				mid := time.Now()
				err2 := op.run(ctx, second)
				*t1 += mid.Sub(start)
				*t2 += time.Since(mid)
				if err1 != nil || err2 != nil {
					b.Fatal(err1, err2)
				}
			}
			b.ReportMetric(float64(tp.Nanoseconds())/float64(b.N), "go-redis-ns/op")
			b.ReportMetric(float64(th.Nanoseconds())/float64(b.N), "fuseredis-ns/op")
			b.ReportMetric(float64(th)/float64(tp), "fuseredis/go-redis")
		})
	}
}
