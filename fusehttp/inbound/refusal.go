package inbound

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// WriteRefusal answers a request whose work fusebox refused or cut short,
// and reports whether err was such an error: a refusal (an
// *executor.RejectedError, breaker.ErrOpen, executor.ErrSaturated or
// executor.ErrClosed, executor.ErrQueueTimeout) is answered 503 with a
// Retry-After in whole seconds when a time is known; executor.ErrTimeout
// (the work outlived its deadline) 504. Any other err is left to the
// caller, nothing written. The body is the status text alone. Handler
// answers its own refusals with it, and a handler may answer an outbound
// call's refusal with it too (wrapped errors are matched, as errors.As).
func WriteRefusal(w http.ResponseWriter, err error) bool {
	if err == nil {
		return false
	}
	var retry time.Duration
	code := http.StatusServiceUnavailable
	var re *executor.RejectedError
	switch {
	case errors.As(err, &re):
		retry = re.RetryAfter()
	case errors.Is(err, executor.ErrQueueTimeout):
		retry = time.Second // every slot stayed busy for the queue timeout
	case errors.Is(err, breaker.ErrOpen), errors.Is(err, executor.ErrSaturated), errors.Is(err, executor.ErrClosed):
	case errors.Is(err, executor.ErrTimeout):
		code = http.StatusGatewayTimeout
	default:
		return false
	}
	if retry > 0 {
		w.Header().Set("Retry-After", strconv.FormatInt(int64((retry+time.Second-1)/time.Second), 10))
	}
	http.Error(w, http.StatusText(code), code)
	return true
}
