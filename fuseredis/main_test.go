package fuseredis_test

import (
	"testing"

	"go.uber.org/goleak"
)

// The tests start redis-server processes, go-redis clients and executors;
// every goroutine they start must be gone when they end. (Importing ants,
// through the executor, starts its default pool before TestMain:
// IgnoreCurrent.)
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreCurrent())
}
