// Package inbound protects a service's own HTTP routes with the bulkheads
// and breakers fusebox gives its outgoing calls: Handler admits each
// request through the executor of its route (the http.ServeMux pattern by
// default), holds the slot until the handler returns, and sheds a refused
// request at once with 503 Service Unavailable and Retry-After, so that one
// slow route cannot take every request worker. Config.Group sets each
// route's slots, deadline, breaker and critical share (see package
// priority); fusehttp.Transport on the client side honours the Retry-After.
//
//	cfg := inbound.Config{Group: g}
//	mux.Handle("GET /search", inbound.Handler(search, cfg))
//	mux.Handle("GET /home", inbound.Handler(home, cfg))
//
// A route that reads request bodies sets Config.BodyLimit, so that a client
// that sends its body slowly holds no slot while it does. TrustedPriority
// reads a request's priority from a header, only for the peers a predicate
// of the service trusts (PeerIn: its own network). WriteRefusal
// answers a refusal of an outbound call in a handler as Handler answers
// its own. Responses carry no detail of the service (route patterns,
// supplier names, panic values): those go to Config.Logger. The handlers
// and middleware the package returns are safe for concurrent use.
package inbound
