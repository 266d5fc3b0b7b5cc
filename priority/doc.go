// Package priority marks calls as critical, default or sheddable, through
// their context, so that a bulkhead that fills up refuses the calls that
// matter least first.
//
// An executor with a critical share (executor.Config.CriticalShare) keeps
// that share of its slots for critical calls and lets sheddable calls hold
// at most half of the rest: a burst of background work cannot take the
// slots that interactive requests need, and the requests that must not
// fail (a checkout, a health probe of a dependency) find a slot while
// everything else is refused. Without a critical share, priorities are
// only counted, by the rejections of each (executor.Stats).
//
// The priority travels with the context: set it once where a request
// enters the service, and every call made on behalf of the request,
// inbound and outbound, carries it. Between services it travels in the
// Header; a service believes it only from the peers it trusts
// (inbound.TrustedPriority in package fusehttp/inbound), or any client
// could make itself critical and take the slots kept for critical calls.
//
//	ctx = priority.With(ctx, priority.Sheddable) // a batch job
//	v, err := executor.Do(ctx, ex, fetch)
//
// The package imports the standard library only, and a process that never
// calls With pays one atomic load per refusal for it.
package priority
