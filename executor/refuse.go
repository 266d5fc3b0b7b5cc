package executor

// Refusals: a call the executor does not run, and why (see admit).

import (
	"context"
	"errors"

	"github.com/fusebox-go/fusebox/breaker"
)

func errBadCall(ctx context.Context, ex *Executor) error {
	switch {
	case ctx == nil:
		return errors.New("executor: Submit with a nil context (use context.Background())")
	case ex == nil:
		return errors.New("executor: Submit to a nil *Executor")
	case ex.unmade():
		return errUnmade
	}
	return errors.New("executor: Submit of a nil function")
}

// saturated trips the breaker in the call that found the bulkhead full of
// stuck calls, and refuses only this call if they are young (StuckConfig).
// A half-open probe that found no slot (calls that ignore their context
// still hold them) is deferred instead: the breaker re-opens for a fresh
// reset timeout, and the caller sees breaker.ErrOpen, as everyone else does
// meanwhile.
//
// The transition runs the listeners on the submitter's goroutine: the call
// is counted out (leave) in a deferred call, so that a listener that ends
// the goroutine (runtime.Goexit) leaves no active call behind for Close to
// wait for, and the refusal is counted before.
func (ex *Executor) saturated(p breaker.Permit) error {
	if p.Probe() {
		defer ex.leave()
		err := ex.reject(RejectedOpen)
		p.Reject(breaker.ProbeDeferred)
		return err
	}
	if !ex.isStuck() {
		return ex.busy() // young calls: refuse this one, leave the breaker alone
	}
	r, br := RejectedSaturated, breaker.Saturation
	if ex.bh.Stats().QueueCap > 0 {
		r, br = RejectedQueueFull, breaker.QueueFull
		rc := ex.counts()
		rc.unservedAtTrip.Store(rc.unserved.Load())
	}
	defer ex.leave()
	err := ex.reject(r)
	p.Reject(br)
	return err
}

// drainedByService reports whether a breaker opened on a full queue may
// close now: the queue is at its low-water mark and got there by serving
// calls. A queue that emptied because its calls timed out (a supplier far
// too slow) or were cancelled proves nothing; that breaker waits for its
// reset timeout and a probe.
func (ex *Executor) drainedByService() bool {
	if !ex.bh.Drained() {
		return false
	}
	rc := ex.counts()
	return rc.unserved.Load() == rc.unservedAtTrip.Load()
}

// closeIfDrained is the queue's hysteresis, after a success: a breaker
// opened on a full queue closes, with no probe, once successful calls have
// drained the queue to its low-water mark. Calls that timed out (in the
// queue or running) never count as draining, so a dead or far too slow
// supplier keeps it open until its reset timeout and a probe.
func (ex *Executor) closeIfDrained() {
	if ex.queued.Load() != nil && ex.br.State() == breaker.Open && ex.drainedByService() {
		ex.br.Drained()
	}
}

// refuseOpen is the refusal of a call the open breaker rejected. The
// breaker counted the rejection (Stats adds it in), so failing fast is a
// clock read, a few loads and one atomic add; in shadow mode the call runs
// all the same (errShadowed).
func (ex *Executor) refuseOpen() error {
	rc := ex.counts()
	if rc.shadow.Load() {
		return rc.shadowOpen()
	}
	return &rc.errs[RejectedOpen]
}

// markUsed notes that the executor has had a call (a Group's eviction
// reads it), writing the shared word only the first time.
func (ex *Executor) markUsed() {
	if !ex.used.Load() {
		ex.used.Store(true)
	}
}

// refuseClosed refuses a call that met Close (or an eviction) as it came
// in: a refusal, as a busy call's is, counted in Rejected.Closed and not
// as an outcome. Only a half-open probe's place must be given back.
func (ex *Executor) refuseClosed(permit breaker.Permit) error {
	if permit.Probe() {
		permit.Ignore()
	}
	ex.leave()
	return ex.reject(RejectedClosed)
}
