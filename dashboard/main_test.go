package dashboard_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Everything started after TestMain began must be gone when the tests end:
// the sampler, every stream, every executor's goroutines.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreCurrent())
}
