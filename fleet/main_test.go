package fleet_test

import (
	"flag"
	"testing"

	"go.uber.org/goleak"
)

// The tests start redis-server processes and go-redis clients; every
// goroutine they start must be gone when they end. (Importing ants starts
// its default pool before TestMain: IgnoreCurrent.) A go-redis connection
// pool whose dial failed (the cluster test kills a master) probes the
// address again on a goroutine of its own for up to a second after the
// client is closed: tryDial is that goroutine.
//
// A fuzz target's new input is minimized for at most 20,000 runs unless
// -fuzzminimizetime says otherwise: by default the engine spends up to a
// minute on it, counting none of those runs (FuzzDecode sat at 0 execs/s
// for 50 s minimizing one 877-byte input, the quadratic pass of the
// minimizer trying ~385,000 subsets).
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.fuzzminimizetime" })
	if !set {
		_ = flag.Set("test.fuzzminimizetime", "20000x")
	}
	goleak.VerifyTestMain(m, goleak.IgnoreCurrent(),
		goleak.IgnoreTopFunction("github.com/redis/go-redis/v9/internal/pool.(*ConnPool).tryDial"),
		goleak.IgnoreAnyFunction("github.com/redis/go-redis/v9/internal/pool.(*ConnPool).tryDial"))
}
