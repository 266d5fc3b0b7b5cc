package future_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fusebox-go/fusebox/future"
)

// A producer completes the promise on its own goroutine; the consumer awaits
// the future with a context that bounds only its own wait.
func ExamplePromise() {
	p := new(future.Promise[string])
	go func() {
		p.Complete("quote: 4.90 EUR", nil)
	}()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	quote, err := p.Future().Await(ctx)
	fmt.Println(quote, err)
	// Output: quote: 4.90 EUR <nil>
}

// Futures do not own their work, so All cannot stop the other producers by
// itself. The idiom: start the work under a context from
// context.WithCancelCause, and cancel it with All's error. The producers
// that are still running see that error as their context's cause.
func ExampleAll() {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)

	var wg sync.WaitGroup // the producers' owner: it waits for all of them
	run := func(work func(context.Context) (string, error)) *future.Future[string] {
		p := new(future.Promise[string])
		wg.Go(func() { p.Complete(work(ctx)) })
		return p.Future()
	}
	slow := func(ctx context.Context) (string, error) {
		<-ctx.Done() // a call that would take long, but honours its context
		return "", context.Cause(ctx)
	}
	outOfStock := func(context.Context) (string, error) {
		return "", errors.New("stock: item 42 sold out")
	}

	fs := []*future.Future[string]{run(slow), run(outOfStock), run(slow)}
	_, err := future.All(ctx, fs...)
	fmt.Println("All:", err)

	cancel(err) // stop the rest: they need not finish once one has failed
	wg.Wait()
	for i, f := range fs {
		_, err := f.Await(context.Background()) // complete: returns at once
		fmt.Printf("future %d: %v\n", i, err)
	}
	// Output:
	// All: stock: item 42 sold out
	// future 0: stock: item 42 sold out
	// future 1: stock: item 42 sold out
	// future 2: stock: item 42 sold out
}

// Any returns the first success: here the second mirror answers while the
// first has failed. When every future fails, Any joins their errors.
func ExampleAny() {
	ctx := context.Background()

	v, err := future.Any(ctx,
		future.Failed[string](errors.New("mirror a: 503")),
		future.Ready("from mirror b"),
	)
	fmt.Printf("%q %v\n", v, err)

	v, err = future.Any(ctx,
		future.Failed[string](errors.New("mirror a: 503")),
		future.Failed[string](errors.New("mirror b: timeout")),
	)
	fmt.Printf("%q %v\n", v, err)
	// Output:
	// "from mirror b" <nil>
	// "" mirror a: 503
	// mirror b: timeout
}

// First returns whichever result comes first, success or failure: a hedged
// request takes the first answer from two replicas.
func ExampleFirst() {
	fast, slow := new(future.Promise[string]), new(future.Promise[string])
	fast.Complete("replica 2", nil)

	v, err := future.First(context.Background(), slow.Future(), fast.Future())
	fmt.Println(v, err)

	// The slow replica may still complete later; nobody is waiting for it.
	fmt.Println(slow.Complete("replica 1", nil))
	// Output:
	// replica 2 <nil>
	// true
}

// Done lets a future take part in a select, next to other channels.
func ExampleFuture_Done() {
	p := new(future.Promise[int])
	go p.Complete(42, nil)

	select {
	case <-p.Future().Done():
		v, err := p.Future().Await(context.Background()) // complete, so this does not block
		fmt.Println(v, err)
	case <-time.After(time.Minute):
		fmt.Println("too slow")
	}
	// Output: 42 <nil>
}
