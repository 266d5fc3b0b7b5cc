package listeners

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

func collect(l *List[func() string]) []string {
	var got []string
	l.Each(func(f func() string) { got = append(got, f()) })
	return got
}

func TestList(t *testing.T) {
	var l List[func() string]
	assert.Empty(t, collect(&l), "the zero List is empty")
	removeA := l.Add(func() string { return "a" })
	removeB := l.Add(func() string { return "b" })
	l.Add(func() string { return "c" })
	assert.Equal(t, []string{"a", "b", "c"}, collect(&l), "in the order added")
	removeB()
	removeB()
	assert.Equal(t, []string{"a", "c"}, collect(&l), "removed once")
	removeA()
	assert.Equal(t, []string{"c"}, collect(&l))
}

// A listener may add or remove listeners while Each runs: Each goes on
// with the list it started with.
func TestEachReadsTheListInForce(t *testing.T) {
	var l List[func()]
	var remove func()
	calls := 0
	remove = l.Add(func() { calls++; remove(); l.Add(func() { calls += 10 }) })
	l.Each(func(f func()) { f() })
	assert.Equal(t, 1, calls, "the listener added during Each is not called by it")
	l.Each(func(f func()) { f() })
	assert.Equal(t, 11, calls, "the next Each sees the change")
}

func TestConcurrentChangesAndReads(t *testing.T) {
	var l List[func()]
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				remove := l.Add(func() {})
				l.Each(func(func()) {})
				remove()
			}
		})
	}
	wg.Wait()
	n := 0
	l.Each(func(func()) { n++ })
	assert.Zero(t, n, "every listener removed")
}
