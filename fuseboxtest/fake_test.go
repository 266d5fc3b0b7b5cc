package fuseboxtest_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/fuseboxtest"
)

var errDown = errors.New("payments down")

func newFake(t *testing.T, script ...fuseboxtest.Phase) *fuseboxtest.Fake {
	t.Helper()
	f, err := fuseboxtest.NewFake(script...)
	require.NoError(t, err)
	return f
}

// timed makes one call with a context that ends after limit, and returns
// how long it took on the (bubble's) clock, and its error.
func timed(f *fuseboxtest.Fake, limit time.Duration) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	start := time.Now()
	err := f.Call(ctx)
	return time.Since(start), err
}

func TestBehaviors(t *testing.T) {
	tests := []struct {
		name    string
		do      fuseboxtest.Behavior
		wantErr error
		took    time.Duration // with a 1 s deadline
	}{
		{"healthy answers after its latency", fuseboxtest.Healthy(30 * time.Millisecond), nil, 30 * time.Millisecond},
		{"healthy gives up with the caller", fuseboxtest.Healthy(time.Hour), context.DeadlineExceeded, time.Second},
		{"hang answers only when the caller gives up", fuseboxtest.Hang(), context.DeadlineExceeded, time.Second},
		{"stall ignores the caller's deadline", fuseboxtest.Stall(3 * time.Second), nil, 3 * time.Second},
		{"fail answers with its error at once", fuseboxtest.Fail(errDown), errDown, 0},
		{"a zero behavior is healthy at once", fuseboxtest.Behavior{}, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFake(t, fuseboxtest.Phase{Do: tt.do})
				took, err := timed(f, time.Second)
				assert.ErrorIs(t, err, tt.wantErr)
				if tt.wantErr == nil {
					assert.NoError(t, err)
				}
				assert.Equal(t, tt.took, took)
				assert.Equal(t, 1, f.Calls())
				assert.Equal(t, 0, f.Inside())
			})
		})
	}
}

func TestScript(t *testing.T) {
	t.Run("phases by time follow the clock without drifting", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := newFake(t,
				fuseboxtest.Phase{Do: fuseboxtest.Healthy(0), For: 10 * time.Second},
				fuseboxtest.Phase{Do: fuseboxtest.Fail(errDown), For: 5 * time.Second},
				fuseboxtest.Phase{Do: fuseboxtest.Healthy(0)})
			var got []bool
			for range 20 { // one call a second
				got = append(got, f.Call(context.Background()) == nil)
				time.Sleep(time.Second)
			}
			for i, ok := range got {
				assert.Equal(t, i < 10 || i >= 15, ok, "second %d", i)
			}
		})
	})
	t.Run("phases by calls count the calls", func(t *testing.T) {
		f := newFake(t,
			fuseboxtest.Phase{Do: fuseboxtest.Fail(errDown), Calls: 3},
			fuseboxtest.Phase{Do: fuseboxtest.Healthy(0), Calls: 2},
			fuseboxtest.Phase{Do: fuseboxtest.Fail(errDown)})
		var got []bool
		for range 7 {
			got = append(got, f.Call(context.Background()) == nil)
		}
		assert.Equal(t, []bool{false, false, false, true, true, false, false}, got)
	})
	t.Run("Set switches at once, and recovering is setting healthy", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := newFake(t)
			require.NoError(t, f.Set(fuseboxtest.Hang()))
			var wg sync.WaitGroup
			wg.Go(func() {
				_, err := timed(f, time.Minute)
				assert.ErrorIs(t, err, context.DeadlineExceeded)
			})
			synctest.Wait()
			assert.Equal(t, 1, f.Inside(), "the hung call is inside")
			require.NoError(t, f.Set(fuseboxtest.Healthy(0)))
			assert.NoError(t, f.Call(context.Background()), "new calls see the recovery")
			assert.Equal(t, 1, f.Inside(), "a call already hung stays hung")
			wg.Wait()
		})
	})
}

func TestFailFraction(t *testing.T) {
	run := func(seed uint64) []bool {
		f := newFake(t, fuseboxtest.Phase{Do: fuseboxtest.FailFraction(0.3, errDown, seed)})
		out := make([]bool, 1000)
		for i := range out {
			out[i] = f.Call(context.Background()) != nil
		}
		return out
	}
	a := run(7)
	failed := 0
	for _, x := range a {
		if x {
			failed++
		}
	}
	assert.InDelta(t, 300, failed, 50, "got %d failures of 1000, want about 30 %%", failed)
	assert.Equal(t, a, run(7), "the same seed fails the same calls")
	assert.NotEqual(t, a, run(8), "another seed, other calls")
}

func TestFakeValidation(t *testing.T) {
	tests := []struct {
		name   string
		script []fuseboxtest.Phase
		want   string
	}{
		{"a negative latency", []fuseboxtest.Phase{{Do: fuseboxtest.Healthy(-1)}}, "Phase[0].Do: the latency of Healthy must be ≥ 0, got -1ns"},
		{"a stall of nothing", []fuseboxtest.Phase{{Do: fuseboxtest.Stall(0)}}, "Phase[0].Do: the duration of Stall must be > 0"},
		{"a failure without an error", []fuseboxtest.Phase{{For: time.Second}, {Do: fuseboxtest.Fail(nil)}}, "Phase[1].Do: the error of Fail must not be nil"},
		{"a fraction above 1", []fuseboxtest.Phase{{Do: fuseboxtest.FailFraction(1.5, errDown, 1)}}, "the fraction of FailFraction must be in [0, 1], got 1.5"},
		{"a negative duration", []fuseboxtest.Phase{{For: -time.Second}}, "Phase[0].For must be ≥ 0, got -1s"},
		{"negative calls", []fuseboxtest.Phase{{Calls: -1}}, "Phase[0].Calls must be ≥ 0, got -1"},
		{"a phase before the last without an end", []fuseboxtest.Phase{{}, {}}, "Phase[0] would last for ever"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := fuseboxtest.NewFake(tt.script...)
			assert.Nil(t, f)
			assert.ErrorContains(t, err, tt.want)
		})
	}
	t.Run("Set refuses an invalid behavior and keeps the old one", func(t *testing.T) {
		f := newFake(t, fuseboxtest.Phase{Do: fuseboxtest.Fail(errDown)})
		assert.ErrorContains(t, f.Set(fuseboxtest.FailFraction(0.5, nil, 1)), "Set: the error of FailFraction must not be nil")
		assert.ErrorIs(t, f.Call(context.Background()), errDown)
	})
}

// A Fake that NewFake did not make has no script: its calls are errors
// that say so (they panicked with an index out of range), until Set gives
// it a behavior. A nil Fake, a nil context and a nil next handler are
// errors too, and an HTTP fake answers them with 500, not as an outage.
func TestAnUnmadeFakeIsAnError(t *testing.T) {
	const zero = "fuseboxtest: a Fake must be made by NewFake (or given a behavior by Set)"
	const nilFake = "fuseboxtest: a nil *Fake: make one with NewFake"
	ctx := context.Background()
	serve := func(h http.Handler) (int, string) {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
		return w.Code, w.Body.String()
	}

	t.Run("a zero Fake", func(t *testing.T) {
		f := &fuseboxtest.Fake{}
		require.EqualError(t, f.Call(ctx), zero)
		_, err := fuseboxtest.Fn(f, 1)(ctx)
		require.EqualError(t, err, zero)
		code, body := serve(f)
		assert.Equal(t, http.StatusInternalServerError, code)
		assert.Equal(t, zero+"\n", body)
		assert.Zero(t, f.Calls(), "no call reached the fake")

		require.NoError(t, f.Set(fuseboxtest.Healthy(0)), "Set scripts it")
		require.NoError(t, f.Call(ctx))
		code, _ = serve(f)
		assert.Equal(t, http.StatusOK, code)
	})

	t.Run("a nil Fake", func(t *testing.T) {
		var f *fuseboxtest.Fake
		require.EqualError(t, f.Call(ctx), nilFake)
		_, err := fuseboxtest.Fn(f, 1)(ctx)
		require.EqualError(t, err, nilFake)
		require.EqualError(t, f.Set(fuseboxtest.Healthy(0)), nilFake)
		code, body := serve(f.Handler(http.NotFoundHandler()))
		assert.Equal(t, http.StatusInternalServerError, code)
		assert.Equal(t, nilFake+"\n", body)
	})

	t.Run("a nil context", func(t *testing.T) {
		f := newFake(t, fuseboxtest.Phase{Do: fuseboxtest.Hang()})
		//lint:ignore SA1012 the nil context is the point
		require.EqualError(t, f.Call(nil), "fuseboxtest: Call with a nil context (use context.Background())") //nolint:staticcheck
	})

	t.Run("a nil next handler", func(t *testing.T) {
		f := newFake(t)
		code, body := serve(f.Handler(nil))
		assert.Equal(t, http.StatusInternalServerError, code)
		assert.Equal(t, "fuseboxtest: Handler was given a nil next handler\n", body)
		assert.Zero(t, f.Calls(), "the request is refused before the fake")
	})
}
