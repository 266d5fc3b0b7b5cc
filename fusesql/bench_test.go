package fusesql_test

import (
	"context"
	"database/sql"
	"syscall"
	"testing"
	"time"

	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusesql"
)

// The contexts the benchmarks' calls carry: "request", a served request's
// deadline, which comes before the supplier's invocation deadline (1 s
// against 2 s); "deadline", a caller's deadline later than the invocation
// deadline (a minute), so that fusesql hands the driver a context of its
// own that ends sooner; "background", context.Background, for which pgx
// watches fusesql's contexts (they carry the invocation deadline) but not
// plain database/sql's.
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
	{"background", func() (context.Context, context.CancelFunc) { return context.Background(), func() {} }},
}

// benchPools are plain database/sql and fusesql over the same driver and
// the tests' real, local PostgreSQL.
func benchPools(b *testing.B) (plain, fuse *sql.DB) {
	s := newShop(b, map[string]executor.Config{"db": supplierConfig(4)}, fusesql.Config{})
	return plainDB(b, 4), s.db
}

func queryRow(b *testing.B, db *sql.DB, ctx context.Context) {
	var v int
	if err := db.QueryRowContext(ctx, "SELECT 1").Scan(&v); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkQueryRow is the cost of fusesql on the commonest call,
// QueryRowContext(...).Scan of SELECT 1, beside plain database/sql in the
// same run (make bench-db: interleaved rounds, per-round ratios).
func BenchmarkQueryRow(b *testing.B) {
	plain, fuse := benchPools(b)
	for _, p := range []struct {
		name string
		db   *sql.DB
	}{{"plain", plain}, {"fusesql", fuse}} {
		for _, c := range benchContexts {
			b.Run(p.name+"/"+c.name, func(b *testing.B) {
				b.ReportAllocs()
				cpu := startCPU()
				for b.Loop() {
					ctx, cancel := c.ctx()
					queryRow(b, p.db, ctx)
					cancel()
				}
				cpu.report(b)
			})
		}
	}
}

// BenchmarkQueryRowPaired runs the two side by side, call for call (in
// alternating order), and reports the ratio of their total times: on a
// shared machine whose load changes from one second to the next, a ratio
// of calls made microseconds apart is far steadier than one of runs made
// seconds apart.
func BenchmarkQueryRowPaired(b *testing.B) {
	plain, fuse := benchPools(b)
	for _, c := range benchContexts {
		b.Run(c.name, func(b *testing.B) {
			var tp, tf time.Duration
			i := 0
			for b.Loop() {
				ctx, cancel := c.ctx()
				first, second, t1, t2 := plain, fuse, &tp, &tf
				if i%2 == 1 {
					first, second, t1, t2 = fuse, plain, &tf, &tp
				}
				i++
				start := time.Now()
				queryRow(b, first, ctx)
				mid := time.Now()
				queryRow(b, second, ctx)
				*t1 += mid.Sub(start)
				*t2 += time.Since(mid)
				cancel()
			}
			b.ReportMetric(float64(tp.Nanoseconds())/float64(b.N), "plain-ns/call")
			b.ReportMetric(float64(tf.Nanoseconds())/float64(b.N), "fusesql-ns/call")
			b.ReportMetric(float64(tf)/float64(tp), "fusesql/plain")
		})
	}
	// "own-timeout": plain database/sql given what fusesql gives each
	// query, a timeout of its own (the supplier's InvocationTimeout, with
	// context.WithTimeout around the caller's context), beside fusesql:
	// what fusebox costs beyond the deadline any protected query carries.
	b.Run("own-timeout", func(b *testing.B) {
		timeout := supplierConfig(4).InvocationTimeout
		var tp, tf time.Duration
		i := 0
		for b.Loop() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			plainCall := func() {
				qctx, qcancel := context.WithTimeout(ctx, timeout)
				queryRow(b, plain, qctx)
				qcancel()
			}
			fuseCall := func() { queryRow(b, fuse, ctx) }
			first, second, t1, t2 := plainCall, fuseCall, &tp, &tf
			if i%2 == 1 {
				first, second, t1, t2 = fuseCall, plainCall, &tf, &tp
			}
			i++
			start := time.Now()
			first()
			mid := time.Now()
			second()
			*t1 += mid.Sub(start)
			*t2 += time.Since(mid)
			cancel()
		}
		b.ReportMetric(float64(tp.Nanoseconds())/float64(b.N), "plain-ns/call")
		b.ReportMetric(float64(tf.Nanoseconds())/float64(b.N), "fusesql-ns/call")
		b.ReportMetric(float64(tf)/float64(tp), "fusesql/plain")
	})
}

// cpuClock reads the CPU time of this process (user and system, all its
// threads: the garbage collector's too; the server is another process). A
// benchmark's CPU time per call is far steadier than its wall time on a
// shared machine, where a goroutine that waits for a core counts wall time
// but no CPU time.
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
