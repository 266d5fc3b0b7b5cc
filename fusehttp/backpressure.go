package fusehttp

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
)

// defaultMaxRetryAfter caps an upstream's Retry-After when
// Transport.MaxRetryAfter is 0.
const defaultMaxRetryAfter = time.Minute

// minRetryAfter is the longest Retry-After that does not open the breaker:
// a busy refusal's (see backpressure).
const minRetryAfter = time.Second

// The backpressure rule: a supplier that answers 429 Too Many Requests or
// 503 Service Unavailable with a Retry-After header (delay-seconds or an
// HTTP date) asked its clients to wait. Transport opens the supplier's
// breaker until then (reason breaker.Remote: the supplier's own word),
// capped by Transport.MaxRetryAfter, so that the requests that follow fail
// fast with breaker.ErrOpen, without a round trip, instead of hammering a
// supplier that is shedding load. When the time has passed, the breaker
// half-opens and its probe tries the supplier again, as after any trip.
// Two waits are not held against the supplier:
//   - one of a second or less: the answer of a server shedding a momentary
//     burst on one route (fusebox's inbound handler answers its busy
//     refusals so); opening the breaker of the whole host for it would
//     refuse every other route's requests too;
//   - one that arrives while the breaker is already open: it comes from a
//     request admitted before the trip, and a late result never extends
//     the open period.
//
// The response itself still reaches the caller, and DefaultClassify counts
// it as a failure, as without the header.
func (t *Transport) backpressure(key string, resp *http.Response) {
	if resp == nil || (resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable) ||
		t.MaxRetryAfter < 0 {
		return
	}
	now := time.Now()
	d, ok := retryAfter(resp.Header.Get("Retry-After"), now)
	if !ok || d <= minRetryAfter {
		return
	}
	ex, ok := t.Group.Lookup(key)
	if !ok || ex.Breaker().State() == breaker.Open {
		return
	}
	limit := t.MaxRetryAfter
	if limit == 0 {
		limit = defaultMaxRetryAfter
	}
	ex.Breaker().OpenRemote(now, now.Add(min(d, limit)))
}

// retryAfter parses a Retry-After value: a positive wait, or false.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0, false
		}
		if secs > int64(100*365*24*time.Hour/time.Second) {
			secs = int64(100 * 365 * 24 * time.Hour / time.Second)
		}
		return time.Duration(secs) * time.Second, true
	}
	at, err := http.ParseTime(v)
	if err != nil || !at.After(now) {
		return 0, false
	}
	return at.Sub(now), true
}
