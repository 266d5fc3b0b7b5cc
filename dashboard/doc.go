// Package dashboard serves a live web page of every supplier's breaker and
// bulkhead (state and why, slots in use, queue, calls and refusals per
// second, latency) and of inbound shedders, for a service's admin listener:
//
//	dash, err := dashboard.New(dashboard.Options{})
//	dash.AddGroup(group)               // every executor of a Group, present and future
//	dash.AddShedder("public", shedder) // an inbound shedder (package shed)
//	mux.Handle("/fusebox/", http.StripPrefix("/fusebox", dash))
//
// The page is embedded (no build step, no CDN) and reads a stream of
// Server-Sent Events (api/events) or one snapshot (api/snapshot). A call
// never waits for it; Options bound its streams, their life and size, and
// the hosts it answers. It has no authentication: Options.AllowControl's
// trip, force-open and reset belong on an admin listener only.
// docs/dashboard.md has the limits, the operator actions and a fleet's view.
package dashboard
