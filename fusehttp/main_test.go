package fusehttp_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every goroutine a test starts must be gone when the tests end: calls,
// deadline timers, and the connections of every transport.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
