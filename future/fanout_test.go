package future

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAll(t *testing.T) {
	tests := []struct {
		fanOutCase
		want    []int
		wantErr error
	}{
		{fanOutCase: fanOutCase{name: "No futures give an empty slice.", n: 0}, want: []int{}},
		{
			fanOutCase: fanOutCase{name: "Futures already complete give their values in order.", n: 3,
				before: []step{{i: 1, v: 11}, {i: 0, v: 10}, {i: 2, v: 12}}},
			want: []int{10, 11, 12},
		},
		{
			fanOutCase: fanOutCase{name: "Values come in index order whatever the completion order.", n: 3,
				after: []step{{i: 2, v: 12}, {i: 0, v: 10}, {i: 1, v: 11}}, wantAt: 3},
			want: []int{10, 11, 12},
		},
		{
			fanOutCase: fanOutCase{name: "A failure at index 2 while index 0 is pending returns at once.", n: 3,
				before: []step{{i: 1, v: 11}, {i: 2, err: errC}}},
			wantErr: errC,
		},
		{
			fanOutCase: fanOutCase{name: "A failure while others are pending returns without waiting for them.", n: 3,
				after: []step{{i: 1, v: 11}, {i: 2, err: errC}, {i: 0, v: 10}}, wantAt: 2},
			wantErr: errC,
		},
		{
			fanOutCase: fanOutCase{name: "The first failure by completion time wins over a lower index.", n: 3,
				after: []step{{i: 2, err: errC}, {i: 0, err: errA}}, wantAt: 1},
			wantErr: errC,
		},
		{
			fanOutCase: fanOutCase{name: "Among failures already complete the lowest index counts as first.", n: 3,
				before: []step{{i: 2, err: errC}, {i: 1, err: errB}}},
			wantErr: errB,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runFanOut(t, tt.fanOutCase, All[int])
			assert.Equal(t, tt.wantAt, got.at, "returned after %d steps, want %d", got.at, tt.wantAt)
			if tt.wantErr != nil {
				assert.ErrorIs(t, got.err, tt.wantErr)
				assert.Nil(t, got.v, "got values %v with an error, want nil", got.v)
				return
			}
			require.NoError(t, got.err)
			assert.Equal(t, tt.want, got.v)
		})
	}
}

func TestAny(t *testing.T) {
	tests := []struct {
		fanOutCase
		want     int
		wantErrs []error // every one must match; nil means success
	}{
		{fanOutCase: fanOutCase{name: "No futures give ErrNoFutures.", n: 0}, wantErrs: []error{ErrNoFutures}},
		{
			fanOutCase: fanOutCase{name: "A success already complete wins at once.", n: 3,
				before: []step{{i: 0, err: errA}, {i: 2, v: 12}}},
			want: 12,
		},
		{
			fanOutCase: fanOutCase{name: "The first success wins even after failures.", n: 3,
				after: []step{{i: 0, err: errA}, {i: 2, v: 12}, {i: 1, v: 11}}, wantAt: 2},
			want: 12,
		},
		{
			fanOutCase: fanOutCase{name: "When all fail their errors are joined.", n: 3,
				before: []step{{i: 1, err: errB}}, after: []step{{i: 2, err: errC}, {i: 0, err: errA}}, wantAt: 2},
			wantErrs: []error{errA, errB, errC},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runFanOut(t, tt.fanOutCase, Any[int])
			assert.Equal(t, tt.wantAt, got.at, "returned after %d steps, want %d", got.at, tt.wantAt)
			for _, want := range tt.wantErrs {
				assert.ErrorIs(t, got.err, want)
			}
			if tt.wantErrs == nil {
				assert.NoError(t, got.err)
			}
			assert.Equal(t, tt.want, got.v, "got %d, want %d", got.v, tt.want)
		})
	}
	t.Run("Joined errors keep the order of the futures.", func(t *testing.T) {
		_, err := Any(context.Background(), Failed[int](errA), Failed[int](errB), Failed[int](errC))
		assert.EqualError(t, err, "a failed\nb failed\nc failed")
	})
}

func TestFirst(t *testing.T) {
	tests := []struct {
		fanOutCase
		want    int
		wantErr error
	}{
		{fanOutCase: fanOutCase{name: "No futures give ErrNoFutures.", n: 0}, wantErr: ErrNoFutures},
		{
			fanOutCase: fanOutCase{name: "Among futures already complete the lowest index is first.", n: 3,
				before: []step{{i: 2, v: 12}, {i: 1, v: 11}}},
			want: 11,
		},
		{
			fanOutCase: fanOutCase{name: "A failure can be first.", n: 2,
				after: []step{{i: 1, err: errB}, {i: 0, v: 10}}, wantAt: 1},
			wantErr: errB,
		},
		{
			fanOutCase: fanOutCase{name: "A success can be first.", n: 2,
				after: []step{{i: 1, v: 11}, {i: 0, err: errA}}, wantAt: 1},
			want: 11,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runFanOut(t, tt.fanOutCase, First[int])
			assert.Equal(t, tt.wantAt, got.at, "returned after %d steps, want %d", got.at, tt.wantAt)
			assert.ErrorIs(t, got.err, tt.wantErr)
			if tt.wantErr == nil {
				assert.NoError(t, got.err)
			}
			assert.Equal(t, tt.want, got.v, "got %d, want %d", got.v, tt.want)
		})
	}
}

// helpers lists the three fan-out functions with a common result type.
var helpers = []struct {
	name string
	call func(context.Context, ...*Future[int]) (any, error)
}{
	{"All", func(ctx context.Context, fs ...*Future[int]) (any, error) { return All(ctx, fs...) }},
	{"Any", func(ctx context.Context, fs ...*Future[int]) (any, error) { return Any(ctx, fs...) }},
	{"First", func(ctx context.Context, fs ...*Future[int]) (any, error) { return First(ctx, fs...) }},
}

func TestFanOutContexts(t *testing.T) {
	for _, h := range helpers {
		t.Run(h.name+": an ended context returns at once and registers nothing.", func(t *testing.T) {
			_, fs := promises(2)
			_, err := h.call(cancelled(), fs...)
			assert.ErrorIs(t, err, context.Canceled)
			for i, f := range fs {
				assert.Zero(t, f.state.Load()&stateWaiters, "future %d: got stateWaiters, want nothing registered", i)
			}
		})
		t.Run(h.name+": an ended context does not hide futures already complete.", func(t *testing.T) {
			_, err := h.call(cancelled(), Ready(1), Ready(2))
			assert.NoError(t, err)
		})
		t.Run(h.name+": a deadline ends the wait after exactly the timeout and leaves nothing behind.", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ps, fs := promises(3)
				// Pending ones, one of them twice, and for Any a failure it
				// must wait past.
				args := []*Future[int]{fs[0], fs[2], fs[0]}
				if h.name == "Any" {
					ps[1].Complete(1, errA)
					args = append(args, fs[1])
				}
				ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
				defer cancel()
				begin := time.Now()
				_, err := h.call(ctx, args...)
				assert.ErrorIs(t, err, context.DeadlineExceeded)
				assert.Equal(t, time.Hour, time.Since(begin))
				for i, f := range fs {
					assert.Nil(t, f.waiters.Front(), "future %d: got waiters left behind", i)
				}
				// Completing after the helper gave up must not block or panic.
				assert.True(t, ps[0].Complete(0, nil))
				assert.True(t, ps[2].Complete(2, nil))
			})
		})
	}
}

func TestFanOutEdgeCases(t *testing.T) {
	t.Run("The same future twice fills both places.", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := new(Promise[int])
			out := start(func() ([]int, error) { return All(t.Context(), p.Future(), p.Future()) })
			synctest.Wait()
			p.Complete(5, nil)
			o := <-out
			require.NoError(t, o.err)
			assert.Equal(t, []int{5, 5}, o.v)
		})
	})
	t.Run("A nil future is an error, whatever the others' states.", func(t *testing.T) {
		for _, h := range helpers {
			_, err := h.call(context.Background(), Ready(1), nil)
			assert.EqualError(t, err, "future: nil *Future at index 1", h.name)
		}
	})
	t.Run("A nil context is an error once a future must be waited for.", func(t *testing.T) {
		for _, h := range helpers {
			_, fs := promises(1)
			_, err := h.call(nil, fs...)
			assert.ErrorContains(t, err, "nil context", h.name)
		}
		_, fs := promises(1)
		//lint:ignore SA1012 the nil context is the point
		_, err := fs[0].Await(nil)
		assert.ErrorContains(t, err, "nil context")
		//lint:ignore SA1012 the nil context is the point
		v, err := Ready(3).Await(nil)
		assert.Equal(t, 3, v, "a complete future answers without looking at the context")
		assert.NoError(t, err)
	})
	t.Run("The context's error is returned, not its cause.", func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(errC)
		_, fs := promises(1)
		_, err := All(ctx, fs...)
		assert.True(t, errors.Is(err, context.Canceled) && !errors.Is(err, errC), "got %v, want context.Canceled only", err)
	})
}

func TestWaiterList(t *testing.T) {
	// list returns the indexes on f's list, oldest first, and leaves the
	// list as it found it.
	list := func(f *Future[int]) []int {
		f.mu.Lock()
		defer f.mu.Unlock()
		idx := []int{}
		var all []*waiter
		for w := f.waiters.PopFront(); w != nil; w = f.waiters.PopFront() {
			idx = append(idx, w.idx)
			all = append(all, w)
		}
		for _, w := range all {
			f.waiters.PushBack(w)
		}
		return idx
	}
	tests := []struct {
		name   string
		remove []int
		want   []int
	}{
		{"Removing the middle waiter keeps both ends.", []int{1}, []int{0, 2}},
		{"Removing the head makes the next one head.", []int{0}, []int{1, 2}},
		{"Removing the tail keeps the rest.", []int{2}, []int{0, 1}},
		{"Removing every waiter in any order empties the list.", []int{1, 2, 0}, []int{}},
		{"Removing a waiter twice is harmless.", []int{1, 1}, []int{0, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := new(Promise[int])
			wake := make(chan int, 3)
			ws := make([]waiter, 3)
			for i := range ws {
				ws[i] = waiter{idx: i, wake: wake}
				require.True(t, p.f.addWaiter(&ws[i]), "addWaiter %d on a pending future: got false", i)
			}
			for _, i := range tt.remove {
				p.f.removeWaiter(&ws[i])
			}
			assert.Equal(t, tt.want, list(&p.f))

			// Completion notifies exactly the waiters still on the list.
			p.Complete(1, nil)
			close(wake)
			got := []int{}
			for i := range wake {
				got = append(got, i)
			}
			assert.Equal(t, tt.want, got, "got notices %v, want %v", got, tt.want)
			assert.False(t, p.f.addWaiter(&waiter{wake: wake}), "addWaiter on a done future: got true")
		})
	}
}
