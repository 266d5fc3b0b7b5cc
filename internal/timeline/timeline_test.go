package timeline

import (
	"math"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// owner records what the timeline told it.
type owner struct {
	mu      sync.Mutex
	expired []Kind
	closed  []Kind
	since   int64
}

func (o *owner) Expired(k Kind) { o.mu.Lock(); o.expired = append(o.expired, k); o.mu.Unlock() }
func (o *owner) Closed(k Kind)  { o.mu.Lock(); o.closed = append(o.closed, k); o.mu.Unlock() }
func (o *owner) Since(Kind) int64 {
	return o.since
}

func (o *owner) told() (expired, closed int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.expired), len(o.closed)
}

// entry returns a deadline of o at d after epoch.
func entry(o *owner, epoch time.Time, d time.Duration) *Deadline {
	return &Deadline{At: int64(time.Since(epoch) + d), Owner: o}
}

func TestDeadlinesExpireInOrderAndTheTimelineRetires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var l Lazy
		epoch := time.Now()
		o := &owner{}
		late, early := entry(o, epoch, 2*time.Second), entry(o, epoch, time.Second)
		early.Kind = 1
		require.True(t, l.Add(late, &epoch))
		require.True(t, l.Add(early, &epoch), "an earlier entry re-arms the timer")
		time.Sleep(time.Second)
		synctest.Wait()
		o.mu.Lock()
		assert.Equal(t, []Kind{1}, o.expired, "only the earlier one is due")
		o.mu.Unlock()
		time.Sleep(time.Second)
		synctest.Wait()
		e, _ := o.told()
		assert.Equal(t, 2, e)
		assert.False(t, l.Live(), "an empty timeline retires with its timer")
	})
}

func TestFinishedDeadlinesNeverExpire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var l Lazy
		epoch := time.Now()
		o := &owner{}
		d := entry(o, epoch, time.Second)
		require.True(t, l.Add(d, &epoch))
		d.Finish()
		time.Sleep(2 * time.Second)
		synctest.Wait()
		e, _ := o.told()
		assert.Zero(t, e, "got a finished deadline expired")
		assert.False(t, l.Live())
	})
}

func TestCloseHandsBackTheLiveEntries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var l Lazy
		epoch := time.Now()
		o := &owner{}
		live, done := entry(o, epoch, time.Hour), entry(o, epoch, time.Hour)
		require.True(t, l.Add(live, &epoch))
		require.True(t, l.Add(done, &epoch))
		done.Finish()
		left, gone := l.Close()
		assert.Equal(t, []*Deadline{live}, left)
		if gone != nil {
			<-gone
		}
		assert.False(t, l.Add(entry(o, epoch, time.Second), &epoch), "closed: nothing more is listed")
	})
}

// A finished entry is only marked done; the timeline must still drop such
// entries soon enough that an entry that stays live at the head of the
// list (a call that ignores its context) does not keep every later one.
func TestDoneDeadlinesAreDroppedWhileALiveOneHoldsTheHead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var l Lazy
		epoch := time.Now()
		o := &owner{}
		require.True(t, l.Add(entry(o, epoch, time.Hour), &epoch))
		most := 0
		for range 10_000 {
			d := entry(o, epoch, 2*time.Hour)
			require.True(t, l.Add(d, &epoch))
			d.Finish()
			tl := l.p.Load()
			tl.mu.Lock()
			most = max(most, tl.n+tl.inboxLen())
			tl.mu.Unlock()
		}
		assert.LessOrEqual(t, most, 2*minSweep+drainEvery, "got %d entries kept at most, want the done ones dropped", most)
		l.Close()
	})
}

// closedTimeline is shared by every closed Lazy: a deadline added after
// Close must be refused before it is pushed, or it would stay in that
// shared inbox for good, keeping its owner alive and racing with other
// timelines' late adds.
func TestDeadlineAddedAfterCloseIsNotKeptByClosedTimeline(t *testing.T) {
	var l Lazy
	epoch := time.Now()
	l.Close()
	for range 3 {
		var d Deadline
		assert.False(t, l.Add(&d, &epoch), "got a deadline listed after close")
	}
	assert.Nil(t, closedTimeline.inbox.Load(), "got deadlines kept in the shared closed timeline's inbox")
}

func TestCountOld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var l Lazy
		epoch := time.Now()
		const h = int64(time.Hour) // every deadline far ahead: none expires meanwhile
		never := &owner{since: math.MaxInt64}
		var ds []*Deadline
		for i, since := range []int64{10, 20, 30, 40} {
			d := &Deadline{At: h + since + 100, Owner: &owner{since: h + since}, Kind: Kind(i)}
			ds = append(ds, d)
			require.True(t, l.Add(d, &epoch))
		}
		require.True(t, l.Add(&Deadline{At: h + 105, Owner: never}, &epoch))
		old, next := l.CountOld(h+25, 100, 10)
		assert.Equal(t, 2, old, "since 10 and 20 are at or before 25")
		assert.Equal(t, h+30, next, "the earliest of the others")
		old, _ = l.CountOld(h+25, 100, 1)
		assert.Equal(t, 1, old, "stops at need")
		ds[0].Finish()
		old, _ = l.CountOld(h+25, 100, 10)
		assert.Equal(t, 1, old, "a finished entry is not counted")
		l.Close()
	})
}

// inboxLen counts the entries in the inbox. Called with mu held, while no
// deadline is being added.
func (t *timeline) inboxLen() int {
	n := 0
	for d := t.inbox.Load(); d != nil; d = d.next {
		n++
	}
	return n
}
