package fleet_test

import (
	"testing"

	"go.uber.org/goleak"
)

// The tests start redis-server processes and go-redis clients; every
// goroutine they start must be gone when they end. (Importing ants starts
// its default pool before TestMain: IgnoreCurrent.)
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreCurrent())
}
