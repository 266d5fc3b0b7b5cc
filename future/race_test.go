package future

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests mean most under -race: besides their assertions, the race
// detector checks the orderings future.go argues for.

// rounds is how often each race is repeated; each round is a fresh future.
const rounds = 200

// bounded returns a context that ends after a minute, so that a lost
// wake-up fails the test instead of hanging it until the binary's timeout.
func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func TestConcurrentCompleteHasExactlyOneWinner(t *testing.T) {
	const completers, awaiters = 16, 16
	ctx := bounded(t)
	for range rounds {
		p := new(Promise[int])
		gate := make(chan struct{})
		var (
			wg      sync.WaitGroup
			wins    atomic.Int32
			winner  atomic.Int32
			earlier = make([]int, awaiters)
			later   = make([]int, awaiters)
		)
		// Awaiters that start before any completion: most of them block.
		for i := range earlier {
			wg.Go(func() {
				v, err := p.Future().Await(ctx)
				assert.NoError(t, err)
				earlier[i] = v
			})
		}
		for i := range completers {
			wg.Go(func() {
				<-gate
				if p.Complete(i, nil) {
					wins.Add(1)
					winner.Store(int32(i))
				}
			})
		}
		// Make sure at least one early awaiter is blocked on the channel,
		// so that every round exercises the wake-up path.
		for p.f.state.Load()&stateChan == 0 {
			runtime.Gosched()
		}
		// Awaiters that start together with the completers: some find the
		// future pending, some completing, some done.
		for i := range later {
			wg.Go(func() {
				<-gate
				v, err := p.Future().Await(ctx)
				assert.NoError(t, err)
				later[i] = v
			})
		}
		close(gate)
		wg.Wait()

		require.Equal(t, int32(1), wins.Load(), "got %d winning Complete calls, want 1", wins.Load())
		want := int(winner.Load())
		for i := range awaiters {
			require.Equal(t, want, earlier[i], "early awaiter %d: got %d, want the winner's %d", i, earlier[i], want)
			require.Equal(t, want, later[i], "late awaiter %d: got %d, want the winner's %d", i, later[i], want)
		}
		// And awaiters that come after it.
		v, err := p.Future().Await(cancelled())
		require.NoError(t, err)
		require.Equal(t, want, v, "Await with an ended context after the race: got %d, want %d", v, want)
		v, err = p.Future().Await(context.Background())
		require.NoError(t, err)
		require.Equal(t, want, v, "Await after the race: got %d, want %d", v, want)
	}
}

func TestDoneRacingWithComplete(t *testing.T) {
	const callers = 8
	for range rounds {
		p := new(Promise[int])
		gate := make(chan struct{})
		chans := make([]<-chan struct{}, callers)
		var wg sync.WaitGroup
		for i := range chans {
			wg.Go(func() {
				<-gate
				chans[i] = p.Future().Done()
			})
		}
		wg.Go(func() {
			<-gate
			p.Complete(1, nil)
		})
		close(gate)
		wg.Wait()

		// Every channel handed out must be closed now that Complete has
		// returned: either the future's own or the shared closed one.
		for i, ch := range chans {
			select {
			case <-ch:
			default:
				t.Fatalf("Done channel %d still open after Complete returned", i)
			}
			if p.f.ch != nil {
				require.Contains(t, []<-chan struct{}{p.f.ch, closedChan}, ch, "channel %d is neither the future's nor the shared closed one", i)
			}
		}
	}
}

func TestHelpersRacingWithCompletions(t *testing.T) {
	const n = 16
	ctx := bounded(t)
	for range rounds {
		ps, fs := promises(n)
		gate := make(chan struct{})
		var wg sync.WaitGroup
		for i, p := range ps {
			wg.Go(func() {
				<-gate
				p.Complete(i*10, nil)
			})
		}
		// First and Any return early, removing their waiters while other
		// completions walk the same lists.
		var all []int
		var allErr, firstErr, anyErr error
		wg.Go(func() { <-gate; all, allErr = All(ctx, fs...) })
		wg.Go(func() { <-gate; _, firstErr = First(ctx, fs...) })
		wg.Go(func() { <-gate; _, anyErr = Any(ctx, fs...) })
		close(gate)
		wg.Wait()

		require.NoError(t, allErr)
		require.NoError(t, firstErr)
		require.NoError(t, anyErr)
		for i, v := range all {
			require.Equal(t, i*10, v, "All result %d: got %d, want %d", i, v, i*10)
		}
		for i, f := range fs {
			require.Nil(t, f.waiters.Front(), "future %d: got waiters left behind", i)
		}
	}
}

func TestHelpersGivingUpWhileFuturesComplete(t *testing.T) {
	const n = 8
	for range rounds {
		ps, fs := promises(n)
		ctx, cancel := context.WithCancel(context.Background())
		gate := make(chan struct{})
		var wg sync.WaitGroup
		for i, p := range ps {
			wg.Go(func() {
				<-gate
				p.Complete(i, errA)
			})
		}
		var err error
		wg.Go(func() { <-gate; _, err = Any(ctx, fs...) })
		wg.Go(func() { <-gate; cancel() })
		close(gate)
		wg.Wait()

		// Either the context or the joined failures, never anything else.
		if !errors.Is(err, errA) {
			require.ErrorIs(t, err, context.Canceled, "got %v, want the failures or ctx.Err()", err)
		}
		for i, f := range fs {
			require.Nil(t, f.waiters.Front(), "future %d: got waiters left behind", i)
		}
	}
}

// racingContext is a context that ends exactly when the future completes:
// its Done channel is closed from the start, and its first Err call, the one
// Await makes before it blocks, completes the future and reports no error
// yet. Await's select then finds both channels ready.
type racingContext struct {
	context.Context // an ended one, whose Err is Canceled
	complete        func()
	once            sync.Once
}

func (c *racingContext) Err() error {
	first := false
	c.once.Do(func() {
		c.complete()
		first = true
	})
	if first {
		return nil
	}
	return c.Context.Err()
}

func TestAwaitPrefersTheResultOverAContextEndingAtTheSameTime(t *testing.T) {
	// select picks at random among ready cases, so a wrong preference shows
	// in about half of the rounds.
	for range rounds {
		p := new(Promise[int])
		ctx := &racingContext{Context: cancelled(), complete: func() { p.Complete(1, nil) }}
		v, err := p.Future().Await(ctx)
		require.NoError(t, err, "got ctx.Err(), want the result that was there too")
		require.Equal(t, 1, v)
	}
}
