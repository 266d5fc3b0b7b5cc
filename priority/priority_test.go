package priority_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/priority"
)

func TestPriorityTravelsInTheContext(t *testing.T) {
	t.Run("a context without a priority is default", func(t *testing.T) {
		assert.Equal(t, priority.Default, priority.From(context.Background()))
		//lint:ignore SA1012 a nil context is tolerated
		assert.Equal(t, priority.Default, priority.From(nil))
	})
	t.Run("With sets it for the context and those derived from it", func(t *testing.T) {
		ctx := priority.With(context.Background(), priority.Critical)
		child, cancel := context.WithCancel(ctx)
		defer cancel()
		assert.Equal(t, priority.Critical, priority.From(child))
		assert.Equal(t, priority.Sheddable, priority.From(priority.With(child, priority.Sheddable)), "the innermost wins")
	})
	t.Run("a value that is no priority is treated as sheddable", func(t *testing.T) {
		assert.Equal(t, priority.Sheddable, priority.From(priority.With(context.Background(), priority.Priority(7))))
	})
}

func TestParseAndString(t *testing.T) {
	for _, p := range []priority.Priority{priority.Default, priority.Critical, priority.Sheddable} {
		got, err := priority.Parse(p.String())
		require.NoError(t, err)
		assert.Equal(t, p, got)
	}
	got, err := priority.Parse("")
	require.NoError(t, err)
	assert.Equal(t, priority.Default, got)
	_, err = priority.Parse("urgent")
	require.ErrorContains(t, err, `"urgent"`)
	assert.Equal(t, "Priority(9)", priority.Priority(9).String())
}

func TestHeaderIsCanonical(t *testing.T) {
	assert.Equal(t, http.CanonicalHeaderKey(priority.Header), priority.Header,
		"the form net/http stores it under, so r.Header[priority.Header] finds it")
}
