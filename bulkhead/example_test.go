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
