package future

import (
	"context"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cancelled returns a context that has already ended.
func cancelled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

func TestAwaitOnCompletedFutures(t *testing.T) {
	completed := func(v int, err error) *Future[int] {
		p := new(Promise[int])
		p.Complete(v, err)
		return p.Future()
	}
	var zero Promise[int]
	zero.Complete(4, nil)
	tests := []struct {
		name    string
		f       *Future[int]
		ctx     context.Context
		want    int
		wantErr error
	}{
		{"A ready future returns its value.", Ready(1), context.Background(), 1, nil},
		{"A failed future returns its error and the zero value.", Failed[int](errA), context.Background(), 0, errA},
		{"Failed with a nil error is a ready zero value.", Failed[int](nil), context.Background(), 0, nil},
		{"A completed promise returns both value and error.", completed(3, errB), context.Background(), 3, errB},
		{"A completed zero promise returns its value.", zero.Future(), context.Background(), 4, nil},
		{"A completed future ignores a context that has already ended.", Ready(5), cancelled(), 5, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.f.Await(tt.ctx)
			assert.Equal(t, tt.want, got, "got value %d, want %d", got, tt.want)
			assert.ErrorIs(t, err, tt.wantErr)
			if tt.wantErr == nil {
				assert.NoError(t, err)
			}
			got, err = tt.f.Await(cancelled())
			assert.Equal(t, tt.want, got, "Await with an ended context: got value %d, want %d", got, tt.want)
			assert.Equal(t, tt.wantErr, err, "Await with an ended context: got error %v, want %v", err, tt.wantErr)
		})
	}
}

func TestAwaitOnPendingFutures(t *testing.T) {
	t.Run("An already cancelled context returns its error at once without making a channel.", func(t *testing.T) {
		p := new(Promise[int])
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(errC)
		got, err := p.Future().Await(ctx)
		assert.Zero(t, got)
		assert.ErrorIs(t, err, context.Canceled, "got %v, want ctx.Err(), not the cause", err)
		assert.Nil(t, p.f.ch, "got a done channel, want none")
	})
	t.Run("A deadline that passes first returns DeadlineExceeded after exactly the timeout.", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := new(Promise[int])
			ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
			defer cancel()
			begin := time.Now()
			_, err := p.Future().Await(ctx)
			assert.ErrorIs(t, err, context.DeadlineExceeded)
			assert.Equal(t, time.Hour, time.Since(begin), "got a wait of %v, want 1h", time.Since(begin))
		})
	})
	t.Run("A completion before the deadline wakes the awaiter with the value.", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := new(Promise[int])
			ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
			defer cancel()
			out := start(func() (int, error) { return p.Future().Await(ctx) })
			synctest.Wait()
			_, done := poll(out)
			require.False(t, done, "Await returned before completion")
			time.Sleep(time.Minute) // fake time inside the bubble
			require.True(t, p.Complete(7, nil))
			o := <-out
			assert.Equal(t, outcome[int]{7, nil}, o)
		})
	})
	t.Run("An ended wait does not affect a later completion.", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := new(Promise[int])
			ctx, cancel := context.WithTimeout(t.Context(), time.Second)
			defer cancel()
			_, err := p.Future().Await(ctx)
			require.ErrorIs(t, err, context.DeadlineExceeded)
			require.True(t, p.Complete(8, errA), "got false, want the first Complete to win")
			got, err := p.Future().Await(ctx)
			assert.Equal(t, 8, got, "got %d, want 8 even though ctx has ended", got)
			assert.ErrorIs(t, err, errA)
		})
	})
	t.Run("Await with an ended context polls: its error until the future completes.", func(t *testing.T) {
		p := new(Promise[int])
		got, err := p.Future().Await(cancelled())
		assert.Zero(t, got)
		assert.ErrorIs(t, err, context.Canceled)
		p.Complete(9, nil)
		got, err = p.Future().Await(cancelled())
		assert.Equal(t, 9, got)
		assert.NoError(t, err)
	})
}

func TestAwaitWithAContextThatNeverEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := new(Promise[int])
		ctx := context.WithoutCancel(t.Context())
		out := start(func() (int, error) { return p.Future().Await(ctx) })
		synctest.Wait()
		_, done := poll(out)
		require.False(t, done, "Await returned before completion")
		p.Complete(3, errA)
		assert.Equal(t, outcome[int]{3, errA}, <-out)
	})
}

func TestZeroFutureNeverCompletes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var f Future[int]
		ctx, cancel := context.WithTimeout(t.Context(), 24*time.Hour)
		defer cancel()
		begin := time.Now()
		_, err := f.Await(ctx)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, 24*time.Hour, time.Since(begin))
		select {
		case <-f.Done():
			t.Fatal("got a closed Done channel, want one that never closes")
		default:
		}
		_, err = f.Await(cancelled())
		assert.ErrorIs(t, err, context.Canceled)
	})
}

func TestDone(t *testing.T) {
	t.Run("A future completed before anyone asked shares the closed channel.", func(t *testing.T) {
		f := Ready(1)
		assert.Equal(t, (<-chan struct{})(closedChan), f.Done())
		assert.Nil(t, f.ch, "got a channel of its own, want none")
	})
	t.Run("A pending future's channel is the same on every call and closes on Complete.", func(t *testing.T) {
		p := new(Promise[int])
		ch := p.Future().Done()
		require.Equal(t, ch, p.Future().Done(), "got a second channel, want the same one")
		select {
		case <-ch:
			t.Fatal("got a closed channel before Complete")
		default:
		}
		p.Complete(1, nil)
		select {
		case <-ch:
		default:
			t.Fatal("got an open channel after Complete")
		}
		assert.Equal(t, ch, p.Future().Done(), "got another channel after Complete, want the same one")
	})
}

func TestCompleteOnlyOnce(t *testing.T) {
	type call struct {
		Promise[string]
		n int
	}
	tests := []struct {
		name string
		p    func() *Promise[string]
	}{
		{"A zero promise.", func() *Promise[string] { return new(Promise[string]) }},
		{"A zero promise embedded in a struct.", func() *Promise[string] { return &(&call{n: 1}).Promise }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.p()
			require.Same(t, p.Future(), p.Future(), "got a different *Future on a second call")
			require.True(t, p.Complete("first", errA), "first Complete: got false, want true")
			assert.False(t, p.Complete("second", nil), "second Complete: got true, want false")
			assert.False(t, p.Complete("third", errB), "third Complete: got true, want false")
			got, err := p.Future().Await(context.Background())
			assert.Equal(t, "first", got, "got %q, want the first value", got)
			assert.ErrorIs(t, err, errA)
		})
	}
}

// These tests document the allocation counts the package promises.
// AllocsPerRun averages over runs, so the counts are exact for these paths.
func TestAllocations(t *testing.T) {
	type call struct {
		Promise[int]
		n int
	}
	ctx := context.Background()
	var sink *Future[int]
	tests := []struct {
		name string
		want float64
		run  func()
	}{
		{"Ready costs one allocation.", 1, func() { sink = Ready(1) }},
		{"Failed costs one allocation.", 1, func() { sink = Failed[int](errA) }},
		{"Awaiting a completed future costs nothing.", 0, func() { _, _ = sink.Await(ctx) }},
		{"new(Promise), Complete and Await of the completed future cost one allocation.", 1, func() {
			p := new(Promise[int])
			sink = p.Future() // handed to someone else, as in real use
			p.Complete(1, nil)
			_, _ = p.Future().Await(ctx)
		}},
		{"A promise embedded in a heap struct costs that struct's allocation only.", 1, func() {
			c := &call{n: 1}
			c.Complete(c.n, nil)
			_, _ = c.Future().Await(ctx)
			sink = c.Future()
		}},
		{"Done on a completed future with no channel costs nothing.", 0, func() { <-sink.Done() }},
		{"Blocking before completion adds one allocation, the done channel.", 2, func() {
			p := new(Promise[int])
			sink = p.Future()
			ch := p.Future().Done()
			p.Complete(1, nil)
			select {
			case <-ch:
			default:
				t.Error("got an open channel after Complete")
			}
		}},
		{"All over completed futures costs only the result slice.", 1, func() {
			_, _ = All(ctx, sink, sink, sink)
		}},
		{"Any and First over completed futures cost nothing.", 0, func() {
			_, _ = Any(ctx, sink, sink)
			_, _ = First(ctx, sink, sink)
		}},
	}
	sink = Ready(1)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := testing.AllocsPerRun(100, tt.run)
			assert.Equal(t, tt.want, got, "got %v allocations, want %v", got, tt.want)
		})
	}
}

// Awaiting with a context that never ends parks without a channel: a round
// trip with a producer that completes later allocates nothing.
func TestAwaitWithABackgroundContextAllocatesNothing(t *testing.T) {
	promises := make(chan *Promise[int])
	done := make(chan struct{})
	go func() {
		defer close(done)
		for p := range promises {
			runtime.Gosched() // let the awaiter block first, most of the time
			p.Complete(7, nil)
		}
	}()
	ps := make([]Promise[int], 201)
	i := 0
	allocs := testing.AllocsPerRun(200, func() {
		p := &ps[i]
		i++
		promises <- p
		v, err := p.Future().Await(context.Background())
		if v != 7 || err != nil {
			t.Errorf("got %v, %v, want 7, nil", v, err)
		}
	})
	close(promises)
	<-done
	assert.Zero(t, allocs, "got %v allocations per Await, want none", allocs)
}

// A second goroutine awaiting with a never-ending context, while the first
// sleeps, waits on the channel and wakes too.
func TestTwoSleepersBothWake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var p Promise[int]
		got := make(chan int, 2)
		for range 2 {
			go func() {
				v, _ := p.Future().Await(context.Background())
				got <- v
			}()
		}
		synctest.Wait()
		p.Complete(3, nil)
		assert.Equal(t, 3, <-got)
		assert.Equal(t, 3, <-got)
	})
}
