package fusepgx_test

import (
	"context"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusepgx"
)

// The contexts the benchmarks' calls carry: "request", a served request's
// deadline, which comes before the supplier's invocation deadline (1 s
// against 2 s), so that fusepgx hands pgx the caller's context; "deadline",
// a caller's deadline later than the invocation deadline (a minute), so
// that fusepgx hands pgx the lease's context, which ends sooner.
var benchContexts = []struct {
	name string
	ctx  func() (context.Context, context.CancelFunc)
}{
	{"request", func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.Background(), time.Second)
	}},
	{"deadline", func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.Background(), time.Minute)
	}},
}

// rowQueryer is what both pools offer.
type rowQueryer interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// benchPools are plain pgxpool and fusepgx over the tests' real, local
// PostgreSQL, 4 connections each, warmed.
func benchPools(b *testing.B) (plain, fuse rowQueryer) {
	s := newShop(b, map[string]executor.Config{"db": supplierConfig(4)}, fusepgx.Config{})
	p := plainPool(b, 4)
	for range 4 {
		queryRow(b, p, context.Background())
		queryRow(b, s.p, context.Background())
	}
	return p, s.p
}

func queryRow(b *testing.B, p rowQueryer, ctx context.Context) {
	var v int
	if err := p.QueryRow(ctx, "SELECT 1").Scan(&v); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkQueryRow is the cost of fusepgx on the commonest call,
// QueryRow(...).Scan of SELECT 1, beside plain pgxpool in the same run
// (make bench-pgx: interleaved rounds, per-round ratios).
func BenchmarkQueryRow(b *testing.B) {
	plain, fuse := benchPools(b)
	for _, p := range []struct {
		name string
		q    rowQueryer
	}{{"plain", plain}, {"fusepgx", fuse}} {
		for _, c := range benchContexts {
			b.Run(p.name+"/"+c.name, func(b *testing.B) {
				b.ReportAllocs()
				cpu := startCPU()
				for b.Loop() {
					ctx, cancel := c.ctx()
					queryRow(b, p.q, ctx)
					cancel()
				}
				cpu.report(b)
			})
		}
	}
}

// BenchmarkQueryRowPaired runs the two side by side, call for call (in
// alternating order), and reports the ratio of their total times
// (fusepgx/plain) and of their median call times (p50-fusepgx/plain): on a
// shared machine whose load changes from one second to the next, a ratio
// of calls made microseconds apart is far steadier than one of runs made
// seconds apart, and the medians leave out the calls that waited for a
// core.
func BenchmarkQueryRowPaired(b *testing.B) {
	plain, fuse := benchPools(b)
	for _, c := range benchContexts {
		b.Run(c.name, func(b *testing.B) {
			var tp, tf time.Duration
			var dp, df []time.Duration
			i := 0
			for b.Loop() {
				ctx, cancel := c.ctx()
				first, second, t1, t2, d1, d2 := plain, fuse, &tp, &tf, &dp, &df
				if i%2 == 1 {
					first, second, t1, t2, d1, d2 = fuse, plain, &tf, &tp, &df, &dp
				}
				i++
				start := time.Now()
				queryRow(b, first, ctx)
				mid := time.Now()
				queryRow(b, second, ctx)
				end := time.Now()
				*t1 += mid.Sub(start)
				*t2 += end.Sub(mid)
				*d1 = append(*d1, mid.Sub(start))
				*d2 = append(*d2, end.Sub(mid))
				cancel()
			}
			b.ReportMetric(float64(tp.Nanoseconds())/float64(b.N), "plain-ns/call")
			b.ReportMetric(float64(tf.Nanoseconds())/float64(b.N), "fusepgx-ns/call")
			b.ReportMetric(float64(tf)/float64(tp), "fusepgx/plain")
			b.ReportMetric(float64(median(df))/float64(median(dp)), "p50-fusepgx/plain")
		})
	}
}

func median(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}

// cpuClock reads the CPU time of this process (user and system, all its
// threads; the server is another process): far steadier per call than
// wall time on a shared machine.
type cpuClock struct{ start time.Duration }

func cpuNow() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func startCPU() cpuClock { return cpuClock{cpuNow()} }

// report adds cpu-ns/op: the process's CPU time per iteration since start.
func (c cpuClock) report(b *testing.B) {
	b.ReportMetric(float64(cpuNow()-c.start)/float64(b.N), "cpu-ns/op")
}
