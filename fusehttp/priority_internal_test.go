package fusehttp

import (
	"net/http"
	"testing"

	"github.com/fusebox-go/fusebox/priority"
)

// BenchmarkPriorityHeader is what carrying a priority adds to an outbound
// request with a typical header: one map of the header's size.
func BenchmarkPriorityHeader(b *testing.B) {
	h := http.Header{"Accept": {"application/json"}, "User-Agent": {"shop/1.0"},
		"Authorization": {"Bearer x"}, "Traceparent": {"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}
	b.ReportAllocs()
	for b.Loop() {
		_ = withPriority(h, "", priority.Critical)
	}
}
