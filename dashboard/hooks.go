package dashboard

import (
	"context"
	"fmt"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
)

// controlTimeout bounds one call of Options.Control.
const controlTimeout = 10 * time.Second

// callHook runs f, a hook of the user's (Options.Control, FleetView), on a
// goroutine of its own with a context that ends after d, so that a hook
// that ignores its context cannot hold the request, or the requests
// queued behind it, past d. It returns f's error; an error naming the hook
// if f panics or ends its goroutine (runtime.Goexit); or one when d (or
// ctx) ends first. Such a hook's goroutine then lives on until it returns,
// and its answer is dropped.
func callHook(ctx context.Context, d time.Duration, name string, f func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		err, perr := breaker.Guard(name, func() (error, error) { return f(ctx), nil }, func(error) {
			done <- fmt.Errorf("%s ended its goroutine (runtime.Goexit)", name)
		})
		if pe, ok := perr.(*breaker.PanicError); ok {
			err = fmt.Errorf("%s panicked: %v", name, pe.Value)
		}
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("%s did not return within %v: %w", name, d, ctx.Err())
	}
}
