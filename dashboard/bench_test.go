package dashboard_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/dashboard"
	"github.com/fusebox-go/fusebox/executor"
)

// One sample of n suppliers: read every executor's stats, add a point to
// each busy supplier's series, sort, encode the full and the update frame.
// The sampler does this once per Options.Interval while a page is open.
func BenchmarkSample(b *testing.B) {
	for _, n := range []int{10, 200, 1000, 10000} {
		b.Run(strconv.Itoa(n)+" suppliers", func(b *testing.B) {
			g, err := executor.NewGroup(executor.GroupConfig{Default: config})
			require.NoError(b, err)
			defer g.Close(context.Background())
			for i := range n {
				ex, err := g.Executor("supplier-" + strconv.Itoa(i))
				require.NoError(b, err)
				executor.Do(context.Background(), ex, func(context.Context) (int, error) { return 0, nil })
			}
			h, err := dashboard.New(dashboard.Options{}) // the 200 worst shown

			require.NoError(b, err)
			h.AddGroup(g)
			now := time.Now()
			h.SampleAt(now)
			b.ReportAllocs()
			for b.Loop() {
				now = now.Add(time.Second)
				h.SampleAt(now)
			}
		})
	}
}

// A protected call with no dashboard, and with a page open on a dashboard
// sampling at its fastest (every 100 ms) plus a browser that never reads:
// the call's path never waits for the dashboard, so the two should match.
func BenchmarkDoWhileWatched(b *testing.B) {
	for _, watched := range []bool{false, true} {
		name := "unwatched"
		if watched {
			name = "watched"
		}
		b.Run(name, func(b *testing.B) {
			ex, err := executor.New("payments", config)
			require.NoError(b, err)
			defer ex.Close(context.Background())
			if watched {
				h, err := dashboard.New(dashboard.Options{Interval: 100 * time.Millisecond})
				require.NoError(b, err)
				h.Add(ex)
				live := newSSEWriter()
				live.events = make(chan event, 1<<16)
				_, stopLive := stream(h, live)
				stuck := newSSEWriter()
				stuck.block = make(chan struct{})
				_, stopStuck := stream(h, stuck)
				defer func() {
					close(stuck.block)
					stopStuck()
					stopLive()
					h.Close(context.Background())
				}()
			}
			ctx := context.Background()
			fn := func(context.Context) (int, error) { return 1, nil }
			b.ReportAllocs()
			for b.Loop() {
				if _, err := executor.Do(ctx, ex, fn); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
