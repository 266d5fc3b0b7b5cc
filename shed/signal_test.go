package shed

import (
	"math"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// spin keeps n goroutines runnable for d: each loops on the CPU, so that
// all but GOMAXPROCS of them wait in the run queue; with yield, each calls
// runtime.Gosched between short runs of work.
func spin(n int, d time.Duration, yield bool) {
	var wg sync.WaitGroup
	end := time.Now().Add(d)
	for range n {
		wg.Go(func() {
			for time.Now().Before(end) {
				for i := 0; i < 1000; i++ {
					_ = i * i
				}
				if yield {
					runtime.Gosched()
				}
			}
		})
	}
	wg.Wait()
}

func TestTheRuntimeSignalSeesTheRunQueue(t *testing.T) {
	wait := newRunnableWait()
	wait() // from here on
	time.Sleep(100 * time.Millisecond)
	quiet := wait()

	// 4 goroutines per P for 300 ms: about 3 of every 4 wait, 0.9 s of
	// waiting per P. They yield every few microseconds: the runtime times
	// one transition in 8, and goroutines preempted every 10 ms make 60 a
	// P, too few for the sum (184 ms was seen on a loaded host).
	procs := runtime.GOMAXPROCS(0)
	spin(4*procs, 300*time.Millisecond, true)
	busy := wait()
	t.Logf("GOMAXPROCS %d: runnable wait %v while quiet, %v while %d goroutines spun", procs, quiet, busy, 4*procs)
	assert.Less(t, quiet, busy/4, "quiet, against busy (a loaded host makes even a quiet process wait)")
	// About 0.9 s a P in theory; 587 ms over 2 Ps was seen under -race.
	assert.Greater(t, busy, time.Duration(procs)*150*time.Millisecond, "busy")
}

func TestTheBusySignalSeesTheCPUs(t *testing.T) {
	runtime.GC() // not in the quiet interval
	busy := newBusy()
	time.Sleep(200 * time.Millisecond)
	quiet := busy()
	if quiet < 0 {
		t.Skip("the kernel reports no thread times here")
	}
	// Twice as many spinning goroutines as Ps: every P runs or waits for
	// the operating system all along, however loaded the host.
	spin(2*runtime.GOMAXPROCS(0), 300*time.Millisecond, false)
	full := busy()
	t.Logf("busy %.2f while quiet, %.2f while spinning", quiet, full)
	// 0.00-0.01 usually; 0.40 was seen once under -race on a host with a
	// load average of 45 (the other tests' threads ending).
	assert.Less(t, quiet, full/2, "quiet, against spinning")
	assert.Greater(t, full, 0.9, "spinning")
}

func TestSumDelta(t *testing.T) {
	buckets := []float64{negInf(), 0, 0.001, 0.01, posInf()}
	// 2 in [0, 1ms), 1 in [1ms, 10ms), 1 in [10ms, +Inf): at 0.5, 5.5 and 10 ms.
	got := sumDelta(buckets, []uint64{0, 3, 1, 2}, []uint64{0, 1, 0, 1})
	require.InDelta(t, 2*0.0005+0.0055+0.01, got, 1e-12)
	assert.Zero(t, sumDelta(buckets, []uint64{0, 3, 1, 2}, []uint64{0, 3, 1, 2}))
}

func negInf() float64 { return math.Inf(-1) }
func posInf() float64 { return math.Inf(1) }
