package fleet_test

import (
	"testing"

	"go.uber.org/goleak"
)

// The tests start redis-server processes and go-redis clients; every
// goroutine they start must be gone when they end. (Importing ants starts
// its default pool before TestMain: IgnoreCurrent.) A go-redis connection
// pool whose dial failed (the cluster test kills a master) probes the
// address again on a goroutine of its own for up to a second after the
// client is closed: tryDial is that goroutine.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreCurrent(),
		goleak.IgnoreTopFunction("github.com/redis/go-redis/v9/internal/pool.(*ConnPool).tryDial"),
		goleak.IgnoreAnyFunction("github.com/redis/go-redis/v9/internal/pool.(*ConnPool).tryDial"))
}
