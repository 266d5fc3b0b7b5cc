package fusehttp

import (
	"net/http"

	"github.com/fusebox-go/fusebox/priority"
)

// priorityValues holds the header value of each priority, made once: the
// outgoing header shares them, and nothing down the line modifies a
// request's header values.
var priorityValues = [priority.Levels][]string{
	priority.Default:   {priority.Default.String()},
	priority.Critical:  {priority.Critical.String()},
	priority.Sheddable: {priority.Sheddable.String()},
}

// withPriority returns a copy of h (one map; the values are shared) that
// also carries p under name ("" for priority.Header). A RoundTripper must
// not modify its request, so the caller's header stays as it was.
func withPriority(h http.Header, name string, p priority.Priority) http.Header {
	if name == "" {
		name = priority.Header
	} else {
		name = http.CanonicalHeaderKey(name)
	}
	out := make(http.Header, len(h)+1)
	for k, v := range h {
		out[k] = v
	}
	out[name] = priorityValues[p]
	return out
}
