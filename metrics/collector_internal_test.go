package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/executor"
)

// Issue 10.8: a supplier name that is not valid UTF-8 made collect panic
// inside the scrape (client_golang then answers 500 for every metric).
func TestCollectSanitisesNamesThatAreNotUTF8(t *testing.T) {
	c := NewCollector(nil, Opts{})
	ch := make(chan prometheus.Metric, 1000)
	require.NotPanics(t, func() { c.collect(ch, executor.Stats{Supplier: "pay\xffments"}) })
	close(ch)
	require.NotEmpty(t, ch)
	for m := range ch {
		var out dto.Metric
		require.NoError(t, m.Write(&out))
		found := false
		for _, l := range out.GetLabel() {
			if l.GetName() == "supplier" {
				found = true
				assert.Equal(t, "pay\uFFFDments", l.GetValue())
			}
		}
		assert.True(t, found, "every series has the supplier label")
	}
}
