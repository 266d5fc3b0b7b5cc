package fusehttp

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// defaultMaxRetryAfter caps an upstream's Retry-After when
// Transport.MaxRetryAfter is 0.
const defaultMaxRetryAfter = time.Minute

// The backpressure rule: a supplier that answers 429 Too Many Requests or
// 503 Service Unavailable with a Retry-After header (delay-seconds or an
// HTTP date) asked its clients to wait. Transport opens the supplier's
// breaker until then (reason breaker.Remote: the supplier's own word),
// capped by Transport.MaxRetryAfter, so that the requests that follow fail
// fast with breaker.ErrOpen, without a round trip, instead of hammering a
// supplier that is shedding load. When the time has passed, the breaker
// half-opens and its probe tries the supplier again, as after any trip. An
// open breaker only ever has its probe time moved later, never earlier. The
// response itself still reaches the caller, and DefaultClassify counts it
// as a failure, as without the header.
func (t *Transport) backpressure(key string, resp *http.Response) {
	if resp == nil || (resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable) ||
		t.MaxRetryAfter < 0 {
		return
	}
	now := time.Now()
	d, ok := retryAfter(resp.Header.Get("Retry-After"), now)
	if !ok {
		return
	}
	ex, ok := t.Group.Lookup(key)
	if !ok {
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
