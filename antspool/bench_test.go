package antspool_test

import (
	"context"
	"testing"

	"github.com/panjf2000/ants/v2"

	"github.com/fusebox-go/fusebox/antspool"
	"github.com/fusebox-go/fusebox/executor"
)

func trivial(context.Context) (int, error) { return 1, nil }

// BenchmarkRunner compares Submit+Await of a trivial function with each
// call on a goroutine of its own (the default) and on an ants pool, in the
// same run, with a bare go statement and channel as the baseline.
func BenchmarkRunner(b *testing.B) {
	pool, err := ants.NewPool(1<<16, ants.WithNonblocking(true))
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Release()
	for _, r := range []struct {
		name   string
		runner executor.Runner
	}{{"go", nil}, {"ants", antspool.New(pool)}} {
		g, err := executor.NewGroup(executor.GroupConfig{Runner: r.runner, Default: executor.Config{Slots: 1 << 20}})
		if err != nil {
			b.Fatal(err)
		}
		defer g.Close(context.Background())
		ex, err := g.Executor("bench")
		if err != nil {
			b.Fatal(err)
		}
		call := func(b *testing.B) {
			f, err := executor.Submit(context.Background(), ex, trivial)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := f.Await(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(r.name+"/serial", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				call(b)
			}
		})
		b.Run(r.name+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					call(b)
				}
			})
		})
	}
	b.Run("go+chan/serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ch := make(chan int, 1)
			go func() { v, _ := trivial(context.Background()); ch <- v }()
			<-ch
		}
	})
	b.Run("go+chan/parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				ch := make(chan int, 1)
				go func() { v, _ := trivial(context.Background()); ch <- v }()
				<-ch
			}
		})
	})
}
