package executor

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

// The call record is most of what a call costs: with an int result it
// must fit the 192-byte size class.
func TestCallRecordFitsItsSizeClass(t *testing.T) {
	var c call[int]
	assert.LessOrEqual(t, unsafe.Sizeof(c), uintptr(192), "got a %d-byte call record, want at most 192", unsafe.Sizeof(c))
}
