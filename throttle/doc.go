// Package throttle is client-side adaptive throttling, for a supplier that
// is overloaded rather than dead: a client rejects a share of its own
// requests locally, so that what it sends tracks what the supplier
// accepts, instead of tripping open and closed as a circuit breaker does.
//
// Over a sliding window the client counts its requests (every one its
// application attempted, rejected locally or not) and the supplier's
// accepts, per priority, and rejects a new request with probability
//
//	max(0, (requests − K·accepts) / (requests + 1))
//
// as Google's SRE book describes ("Handling Overload"). K sets how far
// requests may run ahead of accepts: 2 lets the supplier see up to twice
// what it accepts, 1.02 (the default) barely more. Rules for the onset and
// the end of an overload let the odds follow it within a second or two
// (see docs/throttle.md). Each priority is counted apart, with its own K,
// smaller for sheddable work: a supplier that refuses sheddable calls and
// accepts critical ones (as an inbound shedder does) sees every critical
// call, and one that fails every priority alike has sheddable requests
// rejected first, then default ones, then critical ones.
//
// A Throttle reads no clock and starts no goroutine: the caller passes the
// time it has already read (an executor reads one per call), and the
// window's buckets advance lazily. It is safe for concurrent use.
package throttle
