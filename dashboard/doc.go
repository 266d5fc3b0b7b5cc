// Package dashboard serves a live web page of every supplier's breaker and
// bulkhead: one tile per executor with its state (colour and text), how
// long it has been in it and why, when the next probe is due, slots in use
// and queue length as bars, calls per second by outcome and refusals by
// reason as sparklines, p50/p99 latency and overdue calls. Tiles in trouble
// come first (open, then half-open, then saturated); a filter box narrows
// them, and each has an anchor (#s-payments) to link to.
//
// It is an http.Handler for a service's admin listener:
//
//	dash, err := dashboard.New(dashboard.Options{})
//	if err != nil { ... }
//	dash.AddGroup(group)          // every executor of a Group, present and future
//	dash.Add(standalone)          // and standalone executors
//	dash.AddPolicies(retrier, hedger) // retries and hedges per supplier (package policy)
//	dash.AddShedder("public", shedder) // an inbound shedder (package shed), beside the suppliers
//	mux := http.NewServeMux()     // the admin mux, not the public one
//	mux.Handle("/fusebox/", http.StripPrefix("/fusebox", dash))
//	admin := &http.Server{Addr: "127.0.0.1:9090", Handler: mux}
//	admin.RegisterOnShutdown(func() { dash.Close(context.Background()) })
//
// A shedder's tile shows its state (normal or overload, shadow mode),
// its capacity estimate, the requests in flight, and the requests shed
// per second by priority (Snapshot.Shedders).
//
// The page (HTML, script and style, embedded: no build step, no CDN, works
// offline) reads GET api/events, a stream of Server-Sent Events with one
// snapshot per Options.Interval that the browser reconnects by itself when
// the service restarts. GET api/snapshot answers the same data as one JSON
// document (Snapshot) for scripts and curl.
//
// # Limits
//
// The hot path of a call never waits for the dashboard: one goroutine reads
// Executor.Stats (atomic loads) once per interval while at least one page
// is open, encodes the snapshot once, and hands it to each stream without
// waiting; a stream that has not sent the previous snapshot gets the newest
// one instead, so a slow browser costs one pointer and a blocked one is
// dropped after Options.WriteTimeout. Options.MaxClients bounds the
// streams (Options.MaxClientsPerAddress those of one client address, and a
// page of a less busy address takes the place of the busiest's oldest),
// Options.StreamLifetime (2 min) the life of each, Options.Interval
// (≥ 100 ms) their event rate, Options.History and Options.MaxSuppliers
// the size of an event; api/snapshot reads the stats at most once per
// interval however often it is asked. Options.AllowedHosts answers 421 to
// a Host that is not the dashboard's (DNS rebinding).
//
// # Operator actions
//
// With Options.AllowControl the page offers trip, force open and reset on
// every tile, each after a confirmation, sent as POST api/control with the
// ControlHeader header from the page's own origin; no GET changes
// anything. The handler has no authentication: mount it only on an admin
// listener that only operators can reach, never on a public port.
//
// # A fleet's view
//
// With Options.FleetView (a fleet link's FleetView method fits) each tile
// has a fleet section: opened, it shows how every replica sees the
// supplier, who probes next and any fleet-wide override, fetched from GET
// api/fleet while it is open, at most once per supplier every 2 s.
package dashboard
