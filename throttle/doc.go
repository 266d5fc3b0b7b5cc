// Package throttle is client-side adaptive throttling, for a supplier that
// is overloaded rather than dead: a client rejects a share of its own
// requests locally, with probability
//
//	max(0, (requests − K·accepts) / (requests + 1))
//
// over a sliding window (Google's SRE book, "Handling Overload"), so that
// what it sends tracks what the supplier accepts. Each priority is counted
// apart with its own K (1.02 by default, 1 for sheddable, 2 for critical
// work), so sheddable requests are rejected first. docs/throttle.md has
// the rules for an overload's onset and end. A Throttle reads no clock
// and starts no goroutine (the caller passes the time); it is safe for
// concurrent use.
package throttle
