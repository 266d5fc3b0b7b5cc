package bulkhead_test

import (
	"context"
	"fmt"

	"github.com/fusebox-go/fusebox/bulkhead"
)

func ExampleBulkhead_TryAcquire() {
	b, err := bulkhead.New(bulkhead.Config{Slots: 2})
	if err != nil {
		panic(err)
	}
	fmt.Println(b.TryAcquire(), b.TryAcquire())
	fmt.Println("third call:", b.TryAcquire()) // saturated: trip the breaker here
	b.Release()
	fmt.Println("after a release:", b.TryAcquire())
	fmt.Printf("%+v\n", b.Stats())
	// Output:
	// true true
	// third call: false
	// after a release: true
	// {InUse:2 Free:0 Queued:0 Slots:2 QueueCap:0 LowWater:0}
}

// job is work that waits for a slot as a queue entry: the Waiter is
// embedded, so queueing it allocates nothing and starts no goroutine.
type job struct {
	bulkhead.Waiter
	name string
}

func ExampleBulkhead_Admit() {
	b, err := bulkhead.New(bulkhead.Config{Slots: 1, Queue: 2})
	if err != nil {
		panic(err)
	}
	jobs := []*job{{name: "a"}, {name: "b"}, {name: "c"}, {name: "d"}}
	for _, j := range jobs {
		j.Value = j
		fmt.Println(j.name, b.Admit(&j.Waiter))
	}

	// c gives up waiting: it leaves the queue and will never run.
	fmt.Println("cancel c:", b.Cancel(&jobs[2].Waiter))

	// a ends: its slot passes straight to the oldest waiter, b, and the
	// releaser must start b's work.
	next := b.Release()
	fmt.Println("a done, start:", next.Value.(*job).name)
	fmt.Println("b done, start:", b.Release())
	fmt.Printf("%+v\n", b.Stats())
	// Output:
	// a Acquired
	// b Queued
	// c Queued
	// d Full
	// cancel c: true
	// a done, start: b
	// b done, start: <nil>
	// {InUse:0 Free:1 Queued:0 Slots:1 QueueCap:2 LowWater:1}
}

func ExampleBulkhead_Acquire() {
	b, err := bulkhead.New(bulkhead.Config{Slots: 1})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	if err := b.Acquire(ctx); err != nil {
		panic(err)
	}
	fmt.Println(b.Acquire(ctx)) // no queue: refused at once
	b.Release()
	// Output:
	// bulkhead: full
}
