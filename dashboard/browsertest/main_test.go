package browsertest

import (
	"testing"

	"go.uber.org/goleak"
)

// The browser, the service and their goroutines are gone when the tests
// end.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreCurrent())
}
