package executor

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
)

// A finished call only marks its deadline done; the timeline must still
// drop such entries soon enough that a call ignoring its context at the
// head of the list does not keep every later call alive.
func TestDoneDeadlinesAreDroppedWhileAStubbornCallHoldsTheHead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ex, err := New("payments", Config{Workers: 4, InvocationTimeout: time.Hour, Breaker: breaker.Config{ResetTimeout: 2 * time.Hour}})
		require.NoError(t, err)
		release := make(chan struct{})
		_, err = Submit(context.Background(), ex, func(context.Context) (int, error) { <-release; return 0, nil })
		require.NoError(t, err)
		most := 0
		for range 10_000 {
			_, err := Do(context.Background(), ex, func(context.Context) (int, error) { return 1, nil })
			require.NoError(t, err)
			tl := ex.run.p.Load()
			tl.mu.Lock()
			most = max(most, tl.n+tl.inboxLen())
			tl.mu.Unlock()
		}
		assert.LessOrEqual(t, most, 2*minSweep+drainEvery, "got %d entries kept at most, want the done ones dropped", most)
		close(release)
		require.NoError(t, ex.Close(context.Background()))
	})
}

// The call record is most of what a call costs: with an int result it
// must fit the 192-byte size class.
func TestCallRecordFitsItsSizeClass(t *testing.T) {
	var c call[int]
	assert.LessOrEqual(t, unsafe.Sizeof(c), uintptr(192), "got a %d-byte call record, want at most 192", unsafe.Sizeof(c))
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

// closedTimeline is shared by every closed executor: a deadline added
// after Close must be refused before it is pushed, or it would stay in that
// shared inbox for good, keeping its call alive and racing with other
// executors' late adds.
func TestDeadlineAddedAfterCloseIsNotKeptByClosedTimeline(t *testing.T) {
	var l lazyTimeline
	epoch := time.Now()
	l.close()
	for range 3 {
		var d deadline
		assert.False(t, l.add(&d, &epoch), "got a deadline listed after close")
	}
	assert.Nil(t, closedTimeline.inbox.Load(), "got deadlines kept in the shared closed timeline's inbox")
}
