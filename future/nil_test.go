package future

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A nil *Future is done with an error, and a nil *Promise completes
// nothing: a pointer left unset is an error the caller sees, not a panic or
// a wait that never ends.
func TestNilFutureAndPromise(t *testing.T) {
	var f *Future[int]
	require.NotPanics(t, func() {
		_, err := f.Await(context.Background())
		assert.ErrorContains(t, err, "nil *Future")
		select {
		case <-f.Done():
		default:
			t.Fatal("a nil future's Done is not closed")
		}
	})
	var p *Promise[int]
	require.NotPanics(t, func() {
		assert.False(t, p.Complete(1, nil))
		_, err := p.Future().Await(context.Background())
		assert.ErrorContains(t, err, "nil *Future")
	})
}
