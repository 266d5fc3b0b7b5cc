package shed

import (
	"net/http"
	"strconv"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
)

// Handler returns a middleware that admits each request through s before
// it calls next, and answers a refused one 503 Service Unavailable with a
// Retry-After header (Config.RetryAfter in whole seconds, rounded up),
// without calling next. The priority is the one the request's context
// carries (package priority). key, if not nil, names the request's tenant
// for the fair shares; it must return something the server trusts (an
// authenticated identity, not a header the client sets freely). A key
// that panics is answered 500 and next is not called.
func (s *Shedder) Handler(next http.Handler, key func(*http.Request) string) http.Handler {
	ra := strconv.FormatInt(int64((s.cfg.RetryAfter+time.Second-1)/time.Second), 10)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k := ""
		if key != nil {
			var ok bool
			if k, ok = callKey(key, r); !ok {
				http.Error(w, "shed: the tenant key function panicked", http.StatusInternalServerError)
				return
			}
		}
		t, err := s.AllowContext(r.Context(), k)
		if err != nil {
			w.Header().Set("Retry-After", ra)
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		defer t.Done()
		next.ServeHTTP(w, r)
	})
}

// callKey runs the user's key function; ok is false if it panicked.
func callKey(key func(*http.Request) string, r *http.Request) (string, bool) {
	k, err := breaker.Guard("shed.Config.Key", func() (string, error) { return key(r), nil }, nil)
	return k, err == nil
}
