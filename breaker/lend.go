package breaker

import "github.com/fusebox-go/fusebox/internal/hook"

// The executor reaches these through internal/hook; see its documentation.
func init() {
	hook.Classify = (*Breaker).classify
	hook.Record = Permit.record
	hook.Reject = Permit.reject
	hook.Probe = Permit.probe
	hook.Drained = (*Breaker).drained
	hook.Current = Permit.current
}
