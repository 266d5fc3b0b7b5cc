package shed

import (
	"testing"

	"go.uber.org/goleak"
)

// Every goroutine a test starts, the sampler included, must be gone when
// the tests end.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
