package dashboard_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Importing ants (through the executor) starts its package-level default
// pool (two goroutines) before any test runs; fusebox never uses it.
// Everything started after TestMain began must be gone when the tests end:
// the sampler and every stream.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreCurrent())
}
