package bulkhead_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/bulkhead"
)

// A nil *Bulkhead has no slots: taking one is an error or false, never a
// panic; releasing one panics as it does whenever none is held.
func TestNilBulkhead(t *testing.T) {
	var b *bulkhead.Bulkhead
	require.NotPanics(t, func() {
		assert.ErrorContains(t, b.Acquire(context.Background()), "nil *Bulkhead")
		assert.False(t, b.TryAcquire())
		assert.Zero(t, b.Stats())
		_, err := b.Resize(bulkhead.Config{Slots: 1})
		assert.ErrorContains(t, err, "nil *Bulkhead")
	})
	assert.PanicsWithValue(t, "bulkhead: Release without Acquire (on a nil *Bulkhead)", func() { b.Release() })
}
