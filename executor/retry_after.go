package executor

import (
	"time"

	"github.com/fusebox-go/fusebox/breaker"
)

// busyRetryAfter is what RetryAfter tells a busy refusal's caller.
const busyRetryAfter = time.Second

// RetryAfter returns how long the refused caller should wait before it
// tries the supplier again, read from the supplier's breaker when it is
// called (the error itself is shared by every refusal): for an open breaker (RejectedOpen, and the
// trips RejectedSaturated and RejectedQueueFull) the time until its next
// probe may start, or 1 s if it is half-open (a probe is running) or its
// probe time has just passed; for a busy bulkhead (RejectedBusy) 1 s, a
// short wait for a slot to free up. It returns 0 when no time is known: a
// closed executor, a breaker forced open until an operator's Reset, an
// error made outside an executor.
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
