package executor

import (
	"time"

	"github.com/fusebox-go/fusebox/breaker"
)

// busyRetryAfter is what RetryAfter tells a busy refusal's caller.
const busyRetryAfter = time.Second

// RetryAfter returns how long to wait before trying again: the time to the
// breaker's next probe, 1 s for a busy bulkhead, 0 when unknown.
func (e *RejectedError) RetryAfter() time.Duration {
	switch {
	case e.Reason == RejectedBusy:
		return busyRetryAfter
	case e.Reason == RejectedClosed || e.Reason >= numRejections || e.br == nil:
		return 0
	}
	st := e.br.Stats()
	if st.State == breaker.ForcedOpen {
		return 0
	}
	if st.OpenUntil.IsZero() {
		return busyRetryAfter
	}
	if d := time.Until(st.OpenUntil); d > 0 {
		return d
	}
	return busyRetryAfter
}
