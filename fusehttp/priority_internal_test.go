package fusehttp

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fusebox-go/fusebox/priority"
)

var sinkHeader http.Header

// priorityHeaderCases are request headers of a few sizes: none (as
// http.NewRequest makes it), a typical one of four entries, and twelve.
func priorityHeaderCases() []struct {
	name string
	h    http.Header
} {
	typical := http.Header{"Accept": {"application/json"}, "User-Agent": {"shop/1.0"},
		"Authorization": {"Bearer x"}, "Traceparent": {"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}
	large := http.Header{}
	for i := range 12 {
		large[fmt.Sprintf("X-Header-%d", i)] = []string{"v"}
	}
	return []struct {
		name string
		h    http.Header
	}{{"empty", http.Header{}}, {"typical", typical}, {"large", large}}
}

// BenchmarkPriorityHeader is what carrying a priority adds to an outbound
// request: one map of the header's size when the priority is not Default,
// nothing when it is or when the header says so already (the context's
// priority is read either way). The floors are the map alone: one of a
// single entry, and a clone of the typical header.
func BenchmarkPriorityHeader(b *testing.B) {
	for _, c := range priorityHeaderCases() {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkHeader = withPriority(c.h, "", priority.Critical)
			}
		})
	}
	typical := priorityHeaderCases()[1].h
	saysSo := maps.Clone(typical)
	saysSo.Set(priority.Header, "critical")
	b.Run("typical-saying-so", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sinkHeader = withPriority(saysSo, "", priority.Critical)
		}
	})
	b.Run("floor/map-of-one", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			h := make(http.Header, 1)
			h[priority.Header] = priorityValues[priority.Critical]
			sinkHeader = h
		}
	})
	b.Run("floor/clone-typical", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sinkHeader = maps.Clone(typical)
		}
	})
	// The whole step of exchange, from a request's context as a lease
	// gives it (a context two values deep).
	base := context.WithValue(context.Background(), struct{ k int }{1}, 1)
	for _, p := range []priority.Priority{priority.Default, priority.Critical} {
		ctx := context.WithValue(priority.With(base, p), struct{ k int }{2}, 2)
		h := priorityHeaderCases()[1].h
		b.Run("from-context/"+p.String(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				out := h
				if p := priority.From(ctx); p != priority.Default {
					out = withPriority(h, "", p)
				}
				sinkHeader = out
			}
		})
	}
}

func TestWithPriority(t *testing.T) {
	for _, c := range priorityHeaderCases() {
		t.Run(c.name+" headers are copied, the caller's left as they were", func(t *testing.T) {
			n := len(c.h)
			got := withPriority(c.h, "x-criticality", priority.Sheddable)
			assert.Len(t, c.h, n, "the caller's header changed")
			assert.Empty(t, c.h.Get("X-Criticality"), "the caller's header changed")
			assert.Len(t, got, n+1)
			assert.Equal(t, "sheddable", got.Get("X-Criticality"))
			for k, v := range c.h {
				assert.Equal(t, v, got[k], k)
			}
		})
	}
	t.Run("a header that says so already is sent as it is", func(t *testing.T) {
		h := http.Header{"Fusebox-Priority": {"critical"}, "Accept": {"text/plain"}}
		got := withPriority(h, "", priority.Critical)
		assert.Equal(t, fmt.Sprintf("%p", h), fmt.Sprintf("%p", got), "got a copy, want the same map")
	})
	t.Run("a nil header gets a map of its own", func(t *testing.T) {
		assert.Equal(t, http.Header{"Fusebox-Priority": {"critical"}}, withPriority(nil, "", priority.Critical))
	})
	t.Run("the name in any other case is replaced in the copy", func(t *testing.T) {
		for _, c := range priorityHeaderCases() {
			h := maps.Clone(c.h)
			h["FUSEBOX-PRIORITY"] = []string{"sheddable"}
			h["fusebox-priority"] = []string{"critical"}
			got := withPriority(h, "", priority.Critical)
			want := maps.Clone(c.h)
			want["Fusebox-Priority"] = []string{"critical"}
			assert.Equal(t, want, got, c.name)
			assert.Len(t, h, len(c.h)+2, "%s: the caller's header changed", c.name)
		}
	})
	t.Run("a header that says otherwise is replaced in the copy", func(t *testing.T) {
		h := http.Header{"Fusebox-Priority": {"critical"}}
		got := withPriority(h, "", priority.Sheddable)
		assert.Equal(t, "sheddable", got.Get("Fusebox-Priority"))
		assert.Equal(t, "critical", h.Get("Fusebox-Priority"), "the caller's header changed")
	})
}
