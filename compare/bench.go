package compare

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
)

// Case is one benchmark: Group/lib=Lib/Mode in go test's naming, e.g.
// BenchmarkClosed/lib=gobreaker/serial.
type Case struct {
	Group    string // Closed, Reject, SubmitAwait
	Lib      string
	Parallel bool
	F        func(b *testing.B)
}

// failure is why the last benchmark failed. testing.Benchmark reports a
// failure only as a zero result of its first, one-iteration run; a failure
// in a later run comes back as a normal-looking result. The bodies record
// every failure here so that the report command can discard such runs.
var failure atomic.Pointer[string]

// fail records why the benchmark failed and fails it.
func fail(b *testing.B, args ...any) {
	msg := fmt.Sprint(args...)
	failure.Store(&msg)
	b.Fatal(args...)
}

// TakeFailure returns why a benchmark failed since the last call, or "".
func TakeFailure() string {
	if p := failure.Swap(nil); p != nil {
		return *p
	}
	return ""
}

// Mode is "serial" or "parallel".
func (c Case) Mode() string {
	if c.Parallel {
		return "parallel"
	}
	return "serial"
}

// Name is the benchmark's name without the -GOMAXPROCS suffix.
func (c Case) Name() string { return "Benchmark" + c.Group + "/lib=" + c.Lib + "/" + c.Mode() }

// Groups lists the benchmark groups in report order, each with the library
// its ratios are taken against.
var Groups = []struct{ Name, Ref, What string }{
	{"Closed", "fusebox", "closed breaker, one successful call: overhead per call"},
	{"Reject", "fusebox", "open breaker: cost of one rejection"},
	{"SubmitAwait", "fusebox", "submit + await of a trivial call through a bounded pool"},
	{"Policy", "fusebox", "a retry or hedge policy around a trivial call that succeeds at once (fusebox: executor.Do alone; failsafe-go: a timeout alone; -retry and -hedge add the policy, no retry or hedge happens)"},
}

func okInt() (int, error)                { return 1, nil }
func okCtx(context.Context) (int, error) { return 1, nil }
func okErr() error                       { return nil }

var errBench = errors.New("compare: planned failure")

func failInt() (int, error) { return 0, errBench }
func failErr() error        { return errBench }

// both makes the serial and the parallel case of one library.
// The bodies below are written out per library so that no benchmark pays
// for an indirect call the library itself would not make.
func both(group, lib string, serial func(b *testing.B), parallel func(b *testing.B)) []Case {
	return []Case{{group, lib, false, serial}, {group, lib, true, parallel}}
}

// Cases returns every benchmark case, fusebox first in each group.
func Cases() []Case {
	var cs []Case
	cs = append(cs, closedCases()...)
	cs = append(cs, rejectCases()...)
	cs = append(cs, submitCases()...)
	cs = append(cs, policyCases()...)
	return cs
}

// ---- 3. Submit + await through a bounded pool.

// SubmitLibs are the subjects of the SubmitAwait group: the ones with a
// bounded pool, and the bare goroutine as the floor. gobreaker,
// go-resiliency and fusebox's breaker alone have no pool (n/a).
var SubmitLibs = []string{"fusebox", "fusebox-ants", "failsafe-go", "failsafe-go-async", "hystrix-go", "hystrix-go-async", "ants", "go", "go-timeout"}

func submitCases() []Case {
	var cs []Case
	for _, name := range SubmitLibs {
		lib := LibByName(name)
		open := func(b *testing.B) Subject {
			sub, err := lib.New(BenchSettings)
			if err != nil {
				fail(b, err)
			}
			return sub
		}
		cs = append(cs, both("SubmitAwait", name, func(b *testing.B) {
			sub := open(b)
			defer sub.Close()
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := sub.Call(ctx, okCtx); err != nil {
					fail(b, err)
				}
			}
		}, func(b *testing.B) {
			sub := open(b)
			defer sub.Close()
			ctx := context.Background()
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := sub.Call(ctx, okCtx); err != nil {
						fail(b, err)
					}
				}
			})
		})...)
	}
	return cs
}
