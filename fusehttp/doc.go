// Package fusehttp protects outgoing HTTP calls with one bulkhead and one
// circuit breaker per upstream host: Transport is an http.RoundTripper that
// runs every request on the executor an executor.Group keeps for the
// request's host.
//
// The story: a service calls a payments API and a catalog API through one
// http.Client. Payments hangs. Each payment request holds one of the
// payments host's slots; the request that finds them all busy is refused
// with executor.ErrSaturated and trips that host's breaker, so payment
// requests fail fast with executor.ErrOpen from then on, without touching
// the network, while catalog requests go on through their own slots:
//
//	g, err := executor.NewGroup(executor.GroupConfig{
//		Default: executor.Config{
//			Workers:           20,
//			InvocationTimeout: 10 * time.Second,
//			Breaker:           breaker.Config{ResetTimeout: 15 * time.Second},
//		},
//		OnTransition: executor.LogTransitions(slog.Default()),
//	})
//	...
//	client := &http.Client{Transport: &fusehttp.Transport{Group: g}}
//	resp, err := client.Get("https://payments.internal/v1/charges")
//	switch {
//	case errors.Is(err, executor.ErrOpen), errors.Is(err, executor.ErrSaturated):
//		// refused at once, nothing sent: degrade
//	case errors.Is(err, executor.ErrTimeout):
//		// no response within the invocation timeout
//	}
//
// After the reset timeout one probe request goes through; its outcome
// closes the breaker or opens it again.
//
// # The slot rule
//
// A request holds its slot from the moment it starts until the response
// body is closed or read to EOF, not merely until the headers arrive: an
// unread, streaming body still occupies the upstream (and a connection).
// Closing the body, or reading it to the end, releases the slot before
// Close or the final Read returns, so a caller that sends its next request
// right after never finds its own slot still held. Responses without a
// body (to HEAD, 204, 304, Content-Length: 0) and 101 Switching Protocols
// release it as soon as they arrive.
//
// The executor's InvocationTimeout bounds the whole exchange, body
// included, like http.Client.Timeout: a body still open at the deadline is
// cut off (its reads fail), the slot is released and the call counts as a
// timeout. A body that is never closed therefore holds its slot no longer
// than the invocation timeout. Give suppliers that stream long responses an
// InvocationTimeout long enough for the whole body.
//
// # Classification
//
// The breaker sees one error per exchange, the one Transport.Classify
// returns; DefaultClassify counts transport errors, timeouts, 5xx and 429
// as failures and every other response as a success. A response classified
// as a failure still reaches the caller as an ordinary *http.Response with
// a nil error. A body that breaks while being read (the upstream cut it off)
// counts as a failure too. The caller's own cancellation is ignored: the
// upstream did nothing wrong.
//
// # Keys
//
// Requests are keyed by host and port by default (HostPort); Host merges
// the ports of a host, and Transport.Key takes any func. Every key gets its
// own executor from the Group: the configuration Dependencies lists under
// that key's name, or else the Group's default one:
//
//	Dependencies: map[string]executor.Config{
//		"payments.internal:443": {Workers: 4, InvocationTimeout: 30 * time.Second, ...},
//	},
//
// Transport.Names maps addresses to dependency names, so that the
// configuration and the metrics say "payments" rather than an address:
//
//	tr := &fusehttp.Transport{Group: g, Names: map[string]string{
//		"payments.internal:443": "payments", // one port of a host
//		"search.internal":       "search",   // every port of a host
//	}}
//
// With GroupConfig.Strict on, requests to addresses that map to no listed
// dependency are refused (executor.ErrUnknownDependency) without being
// sent. With an unbounded set of hosts, set GroupConfig.IdleTimeout so the
// executors of hosts no longer called are evicted.
//
// # Logging
//
// Breaker transitions go to GroupConfig.OnTransition (or a dependency's
// Breaker.OnTransition). executor.LogTransitions logs them with log/slog, at
// Warn when a host stops being called and at Info when it recovers. Any
// other logger takes a func(breaker.Event) of a few lines; Event has the
// supplier's name, the states, the reason and the times, and a String method
// for one-line logs:
//
//	OnTransition: func(e breaker.Event) {
//		log.Printf("%v (open until %v)", e, e.OpenUntil) // "api.example.com:443: closed → open (saturation)"
//	},
//
// The listener runs on the goroutine that caused the transition, one event
// at a time: keep it fast.
package fusehttp
