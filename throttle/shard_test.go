package throttle

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/priority"
)

// TestTheCountsAreExactUnderConcurrentRequests: requests of every priority
// admitted and recorded by many goroutines at once, which add to several
// shards, sum to exactly the requests made and the accepts recorded.
func TestTheCountsAreExactUnderConcurrentRequests(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(maxShards))
	th, err := New(Config{})
	require.NoError(t, err)
	now := int64(time.Hour)
	require.True(t, th.Admit(now, priority.Default)) // opens the bucket: no request races its clearing
	require.Len(t, *th.shards.Load(), maxShards)
	th.Record(now, priority.Default, true)
	var want [priority.Levels]Counts
	want[priority.Default] = Counts{Requests: 1, Accepts: 1}

	// Which P runs which goroutine is the scheduler's choice: a round may
	// run on one P alone, and so add to one shard. Repeat until two have
	// been added to, 20 rounds at most.
	const goroutines, each = 16, 3000
	for round := 0; round < 20 && shardsUsed(th, now) < 2; round++ {
		var wg sync.WaitGroup
		var mu sync.Mutex
		start := make(chan struct{})
		for g := range goroutines {
			wg.Go(func() {
				<-start
				var mine [priority.Levels]Counts
				for i := range each {
					if i%100 == 0 {
						runtime.Gosched() // so that the goroutines interleave
					}
					p := priority.Priority((g + i) % int(priority.Levels))
					mine[p].Requests++
					if !th.Admit(now, p) {
						t.Errorf("goroutine %d: request %d throttled, want every one sent", g, i)
						return
					}
					accepted := i%3 != 0
					if accepted {
						mine[p].Accepts++
					}
					th.Record(now, p, accepted)
				}
				mu.Lock()
				defer mu.Unlock()
				for p := range mine {
					want[p].Requests += mine[p].Requests
					want[p].Accepts += mine[p].Accepts
				}
			})
		}
		close(start)
		wg.Wait()
	}
	require.GreaterOrEqual(t, shardsUsed(th, now), 2, "shards added to")

	// Stats counts the buckets before the newest: open the next one.
	th.Admit(now+int64(1)<<th.shift, priority.Default)
	st := th.Stats()
	assert.Equal(t, want, st.ByPriority)
	total := want[0].Requests + want[1].Requests + want[2].Requests
	assert.Equal(t, total, st.Requests)
}

// shardsUsed returns the number of shards that hold counts in the bucket
// of now.
func shardsUsed(th *Throttle, now int64) int {
	i := int(uint64(now>>th.shift) % buckets)
	used := 0
	shards := *th.shards.Load()
	for s := range shards {
		for p := range priority.Levels {
			if shards[s].counts[i][p].Load() != 0 {
				used++
				break
			}
		}
	}
	return used
}

// TestAThrottleNeverCalledHoldsNoCounts: the shards are made at the
// first request, so that an idle supplier's throttle stays small.
func TestAThrottleNeverCalledHoldsNoCounts(t *testing.T) {
	const n = 1000
	ths := make([]*Throttle, n)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range ths {
		th, err := New(Config{})
		require.NoError(t, err)
		ths[i] = th
	}
	runtime.ReadMemStats(&after)
	perThrottle := (after.TotalAlloc - before.TotalAlloc) / n
	t.Logf("%d B a throttle never called", perThrottle)
	assert.Less(t, perThrottle, uint64(shardBytes), "bytes a throttle never called")
	assert.Equal(t, Stats{}, ths[0].Stats())

	ths[0].Admit(int64(time.Hour), priority.Default)
	assert.Len(t, *ths[0].shards.Load(), ths[0].nshard)
}
