package priority

import (
	"context"
	"fmt"
	"sync/atomic"
)

// Priority says how much a call matters when its supplier's bulkhead fills
// up. The zero value is Default.
type Priority uint8

// The priorities, from the one refused first to the one refused last:
// Sheddable, Default, Critical. The values index arrays of Levels entries
// (executor.Stats.RejectedByPriority).
const (
	// Default is the priority of a call whose context carries none.
	Default Priority = iota
	// Critical calls may use every slot: an executor with a critical share
	// keeps that share of its slots for them alone.
	Critical
	// Sheddable calls (background jobs, prefetches, retries of
	// nice-to-have work) are refused first: they get at most half of the
	// slots the critical share leaves.
	Sheddable
	// Levels is the number of priorities, for arrays indexed by Priority.
	Levels = 3
)

// Header is the HTTP header that carries a call's priority from one
// service to the next, its value as String writes it; in lower case
// ("fusebox-priority") it is the gRPC metadata key. A receiver must
// believe it only from the peers it trusts: see inbound.TrustedPriority
// in package fusehttp/inbound.
const Header = "Fusebox-Priority"

var names = [Levels]string{"default", "critical", "sheddable"}

// String returns "default", "critical" or "sheddable", the metrics label
// of the priority.
func (p Priority) String() string {
	if p < Levels {
		return names[p]
	}
	return fmt.Sprintf("Priority(%d)", p)
}

// Parse returns the priority String names, for a priority read from a
// header or a configuration file. "" is Default. Any other string is an
// error that quotes it.
func Parse(s string) (Priority, error) {
	if s == "" {
		return Default, nil
	}
	for i, n := range names {
		if n == s {
			return Priority(i), nil
		}
	}
	return Default, fmt.Errorf("priority: unknown priority %q (want default, critical or sheddable)", s)
}

type key struct{}

// marked is set by the first With of the process: until then no context
// carries a priority, and From need not look.
var marked atomic.Bool

// With returns a copy of ctx that carries p: the calls made with it, or
// with a context derived from it, are admitted with priority p. A value
// that is none of the constants is refused as Sheddable.
func With(ctx context.Context, p Priority) context.Context {
	if !marked.Load() {
		marked.Store(true)
	}
	return context.WithValue(ctx, key{}, p)
}

// From returns the priority ctx carries: Default if it carries none (or
// if ctx is nil), Sheddable for a value that is none of the constants.
// Until the first With of the process it costs one atomic load.
func From(ctx context.Context) Priority {
	if !marked.Load() {
		return Default // inlined: no call at all
	}
	return from(ctx)
}

func from(ctx context.Context) Priority {
	if ctx == nil {
		return Default
	}
	p, _ := ctx.Value(key{}).(Priority)
	if p >= Levels {
		return Sheddable
	}
	return p
}
