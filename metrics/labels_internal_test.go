package metrics

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// TestReasonsAreComplete checks that the label lists name every breaker
// reason (but the "none" of a breaker that never changed state) and every rejection, each once: a reason added to
// the breaker or the executor must be added here too.
func TestReasonsAreComplete(t *testing.T) {
	for i, r := range reasons {
		assert.Equal(t, breaker.Reason(i+1), r, "reasons[%d]", i)
	}
	assert.True(t, strings.HasPrefix(breaker.Reason(len(reasons)+1).String(), "Reason("),
		"breaker.Reason(%d) has a name: add it to reasons", len(reasons)+1)
	for i, r := range rejections {
		assert.Equal(t, executor.Rejection(i), r, "rejections[%d]", i)
	}
	assert.True(t, strings.HasPrefix(executor.Rejection(len(rejections)).String(), "Rejection("),
		"executor.Rejection(%d) has a name: add it to rejections", len(rejections))
}
