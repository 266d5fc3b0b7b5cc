package executor_test

import (
	"errors"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

func TestFinishRecordsTheClassifiersVerdict(t *testing.T) {
	notMine := errors.New("a business error")
	cases := []struct {
		name     string
		err      error
		classify func(error) error
		want     func(t *testing.T, verdict error, st executor.Stats)
	}{
		{"without a classifier the error is the verdict", errBoom, nil, func(t *testing.T, v error, st executor.Stats) {
			assert.Equal(t, errBoom, v)
			assert.Equal(t, uint64(1), st.Failures)
		}},
		{"a classifier may call an error a success", notMine, func(error) error { return nil }, func(t *testing.T, v error, st executor.Stats) {
			assert.NoError(t, v)
			assert.Equal(t, uint64(1), st.Successes)
			assert.Zero(t, st.Failures)
		}},
		{"a classifier that panics makes a failure naming it", nil, func(error) error { panic("bug") }, func(t *testing.T, v error, st executor.Stats) {
			var pe *breaker.PanicError
			require.ErrorAs(t, v, &pe)
			assert.Equal(t, "test.Classify", pe.Callback)
			assert.Equal(t, "bug", pe.Value)
			assert.Equal(t, uint64(1), st.Failures)
			assert.Equal(t, uint64(1), st.Panics)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ex := newExecutor(t, executor.Config{Slots: 1})
				l, err := ex.Lease(t.Context())
				require.NoError(t, err)
				v := l.Finish(tc.err, tc.classify, "test.Classify")
				st := ex.Stats()
				assert.Zero(t, st.InUse, "the slot is given back")
				tc.want(t, v, st)
				l.Done(nil) // only the first end counts
				assert.Equal(t, st.Successes+st.Failures, ex.Stats().Successes+ex.Stats().Failures)
			})
		})
	}
}

func TestFinishWithAClassifierThatCallsGoexitGivesTheSlotBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ex := newExecutor(t, executor.Config{Slots: 1})
		l, err := ex.Lease(t.Context())
		require.NoError(t, err)
		var wg sync.WaitGroup
		returned := false
		wg.Go(func() {
			l.Finish(nil, func(error) error { runtime.Goexit(); return nil }, "test.Classify")
			returned = true
		})
		wg.Wait()
		assert.False(t, returned, "the Goexit went on")
		st := ex.Stats()
		assert.Zero(t, st.InUse, "the slot is given back")
		assert.Equal(t, uint64(1), st.Failures)
	})
}

func TestSkipRecordsNothingAndPassesTheProbeOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// A classifier that calls every error a failure: Skip does not
		// ask it.
		ex := newExecutor(t, executor.Config{Slots: 2, InvocationTimeout: time.Second,
			Breaker: breaker.Config{ResetTimeout: 2 * time.Second,
				Classify: func(error) breaker.Outcome { return breaker.Failure }}})
		ex.Breaker().Trip(breaker.Manual)
		time.Sleep(2 * time.Second) // half-open on the next call
		dial, err := ex.Lease(t.Context())
		require.NoError(t, err)
		require.Equal(t, breaker.HalfOpen, ex.Breaker().State())
		dial.Skip()
		dial.Done(errBoom) // only the first end counts
		st := ex.Stats()
		assert.Zero(t, st.InUse)
		assert.Zero(t, st.Failures)
		assert.Zero(t, st.Successes)
		assert.Equal(t, breaker.HalfOpen, ex.Breaker().State(), "the dial decided nothing")

		probe, err := ex.Lease(t.Context())
		require.NoError(t, err, "the probe's place passed on")
		probe.Done(nil)
		assert.Equal(t, breaker.Closed, ex.Breaker().State(), "the statement's success closes it")
	})
}
