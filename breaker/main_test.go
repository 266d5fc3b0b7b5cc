package breaker_test

import (
	"testing"

	"go.uber.org/goleak"
)

// The package promises no goroutines at all; goleak checks every test
// leaves none behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
