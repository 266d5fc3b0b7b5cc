package fusehttp

import (
	"maps"
	"net/http"
	"strings"

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

// withPriority returns a header that carries p under name ("" for
// priority.Header), once, and otherwise h's entries: h itself when it says
// so already, else a copy (one map; the values are shared) without h's
// entries of name in any case. A RoundTripper must not modify its
// request, so the caller's header stays as it was.
func withPriority(h http.Header, name string, p priority.Priority) http.Header {
	if name == "" {
		name = priority.Header
	} else {
		name = http.CanonicalHeaderKey(name)
	}
	v := priorityValues[p]
	if cur := h[name]; len(cur) == 1 && cur[0] == v[0] {
		return h
	}
	var out http.Header
	if len(h) < 8 {
		// A small map is one group: the clone copies it as it is, with
		// room for one more entry, instead of hashing every key again.
		out = maps.Clone(h)
		for k := range out {
			if sameName(k, name) {
				delete(out, k)
			}
		}
	}
	if out == nil {
		out = make(http.Header, len(h)+1)
		for k, vs := range h {
			if !sameName(k, name) {
				out[k] = vs
			}
		}
	}
	out[name] = v
	return out
}

// sameName reports whether the header key k is name in any case: an entry
// set as "fusebox-priority" rather than through Set would go out beside
// the priority as a second value.
func sameName(k, name string) bool {
	return len(k) == len(name) && strings.EqualFold(k, name)
}
