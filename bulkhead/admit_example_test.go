package bulkhead_test

import (
	"fmt"

	"github.com/fusebox-go/fusebox/bulkhead"
)

// job is work that waits for a slot as a queue entry: the Waiter is
// embedded, so queueing it allocates nothing and starts no goroutine.
type job struct {
	bulkhead.Waiter
	name string
}

func ExampleBulkhead_Admit() {
	var b bulkhead.Bulkhead
	_, _ = b.Resize(bulkhead.Config{Slots: 1, Queue: 2, LowWater: 1})
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
	fmt.Println(b.Stats().InUse, b.Stats().Queued)
	// Output:
	// a Acquired
	// b Queued
	// c Queued
	// d Full
	// cancel c: true
	// a done, start: b
	// b done, start: <nil>
	// 0 0
}
