// Package fusehttp protects outgoing HTTP calls with one bulkhead and one
// circuit breaker per host: Transport is an http.RoundTripper that
// runs every request on the executor an executor.Group keeps for the
// request's host. Its subpackage inbound does the same for a service's own
// routes: each route's handlers run in the slots of its own executor, and a
// route that has no slot left is shed with 503 and Retry-After.
//
// A service calls a payments API and a catalog API through one http.Client.
// Payments hangs. Each payment request holds one of the payments host's
// slots; once they are held by requests far older than payments normally
// take (stuck, see executor.StuckConfig), the request that finds them all
// taken is refused with executor.ErrSaturated and trips that host's
// breaker (a burst of young requests is only refused, one by one), so
// payment requests
// fail fast with breaker.ErrOpen from then on, without touching the
// network, while catalog requests go on through their own slots:
//
//	g, err := executor.NewGroup(executor.GroupConfig{
//		Default: executor.Config{
//			Slots:             20,
//			InvocationTimeout: 10 * time.Second,
//			Breaker:           breaker.Config{ResetTimeout: 15 * time.Second},
//		},
//		OnTransition: executor.LogTransitions(slog.Default()),
//	})
//	...
//	client := &http.Client{Transport: &fusehttp.Transport{Group: g}}
//	resp, err := client.Get("https://payments.internal/v1/charges")
//	switch {
//	case errors.Is(err, breaker.ErrOpen), errors.Is(err, executor.ErrSaturated), errors.Is(err, executor.ErrBusy):
//		// refused at once, nothing sent: degrade
//	case errors.Is(err, executor.ErrTimeout):
//		// no response within the invocation timeout
//	}
//
// # The slot rule
//
// A request holds its slot (an executor.Lease) from the moment it starts
// until the response body is closed or read to EOF, not merely until the
// headers arrive: an unread, streaming body still occupies the supplier.
// Close and the final Read return only after the slot is released, so a
// caller that sends its next request right after never finds its own slot
// still held. Responses without a body (to HEAD, 204, 304,
// Content-Length: 0) and 101 Switching Protocols release it at once. The
// round trip runs on the caller's goroutine, and an open body costs no
// goroutine.
//
// The executor's InvocationTimeout bounds the whole exchange, body
// included, like http.Client.Timeout: a body still open at the deadline is
// cut off (its Read returns an error matching executor.ErrTimeout), the
// slot is released and the call counts as a timeout. Give
// suppliers that stream long responses a timeout long enough for the body.
//
// # Classification and keys
//
// The breaker sees one error per exchange, the one Transport.Classify
// returns; DefaultClassify counts transport errors, timeouts, 5xx and 429
// as failures and every other response as a success, which still reaches
// the caller as an ordinary response. A body that breaks while being read
// counts as a failure; the caller's own cancellation, and a request body
// whose own Read fails on the caller's side, are ignored.
//
// Requests are keyed by host and port; Transport.Key takes any func (one
// that returns "" leaves a request to host and port). Transport.Names maps
// addresses to supplier names, so that the configuration and the metrics
// say "payments" rather than an address; with GroupConfig.Strict, requests to
// other addresses are refused without being sent. With an unbounded set of
// hosts, set GroupConfig.IdleTimeout so the executors of hosts no longer
// called are evicted.
//
// # Backpressure
//
// A supplier that answers 429 or 503 with a Retry-After header opens its
// breaker until the time it names (at most Transport.MaxRetryAfter, 1
// minute by default): the requests that follow fail fast with
// breaker.ErrOpen instead of hammering a supplier that is shedding load,
// and the half-open probe tries it again when the wait is over.
//
// # Inbound
//
// Package inbound (github.com/fusebox-go/fusebox/fusehttp/inbound) admits
// each request of a service's own routes through the executor of its route
// and sheds a refused one with 503 and a Retry-After, which a Transport on
// the other side honours (Transport.MaxRetryAfter).
package fusehttp
