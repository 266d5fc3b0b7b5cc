package breaker_test

import (
	"errors"
	"fmt"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/bulkhead"
)

// A breaker in front of a bulkhead of your own, connected as the executor
// connects its own: a call that finds every slot taken trips the breaker
// (Reject), and the calls after it fail fast. The executor trips only when
// the slots are stuck; this sketch trips on any saturation.
func Example_withABulkhead() {
	b, _ := breaker.New(breaker.Config{Name: "payments"})
	bh, _ := bulkhead.New(bulkhead.Config{Slots: 1})

	call := func(fn func() error) error {
		p, err := b.Allow()
		if err != nil {
			return err
		}
		if !bh.TryAcquire() {
			p.Reject(breaker.Saturation)
			return errors.New("saturated")
		}
		err = fn()
		bh.Release() // release first, then record: a resubmit finds the slot
		p.Done(err)
		return err
	}

	started, hung, done := make(chan struct{}), make(chan struct{}), make(chan error)
	go func() { done <- call(func() error { close(started); <-hung; return nil }) }()
	<-started // the hung call holds the only slot
	fmt.Println(call(func() error { return nil }))
	fmt.Println(call(func() error { return nil }))
	close(hung)
	fmt.Println(<-done, b.State())
	// Output:
	// saturated
	// breaker: open
	// <nil> open
}

// Current tells the results that may feed a decision: those of calls
// admitted since the last transition.
func ExamplePermit_Current() {
	b, _ := breaker.New(breaker.Config{Name: "payments"})
	before, _ := b.Allow()
	_ = b.Trip(breaker.Manual)
	fmt.Println(before.Current())
	b.Reset()
	after, _ := b.Allow()
	fmt.Println(after.Current())
	// Output:
	// false
	// true
}
