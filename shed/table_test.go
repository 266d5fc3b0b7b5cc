package shed

import (
	"fmt"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/priority"
)

func TestTableLevel(t *testing.T) {
	for _, c := range []struct {
		name         string
		size         int
		counts       map[string]int
		want         float64
		fair, byTeam float64
	}{
		{"one tenant above the others is cut down to what is left", 8,
			map[string]int{"a": 100, "b": 10, "c": 10}, 50, 50, 50},
		{"two above the others share the cut", 8,
			map[string]int{"a": 100, "b": 60, "c": 10}, 60, 50, 60},
		{"tenants all alike are cut alike", 8,
			map[string]int{"a": 10, "b": 10, "c": 10, "d": 10}, 20, 5, 20},
		{"a full table never cuts below its least busy tenant", 2,
			map[string]int{"a": 100, "b": 40}, 100, 40, 60},
		{"nothing to refuse, no level", 8, map[string]int{"a": 100}, 0, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			tb := newTable(c.size)
			for k, n := range c.counts {
				for range n {
					tb.count(k)
				}
			}
			fair, by := tb.level(c.want)
			assert.InDelta(t, c.fair, fair, 1e-9, "fair share")
			assert.InDelta(t, c.byTeam, by, 1e-9, "refused by tenant")
		})
	}
}

func TestAFloodOfNewKeysHasBoundedMemory(t *testing.T) {
	// A million distinct keys, as a client that makes up a tenant per
	// request would send, while a noisy tenant keeps sending: the table
	// stays at its size, the heap does not grow with the keys, and the
	// noisy tenant keeps its entry.
	n := 1_000_000
	if raceOn || testing.Short() {
		n = 200_000 // the race detector makes a million take half a minute
	}
	synctest.Test(t, func(t *testing.T) {
		s, err := newShedder(Config{}, idle)
		require.NoError(t, err)
		defer s.Close()
		pad := strings.Repeat("x", 100) // longer than maxKey
		distinct := map[string]bool{}
		for i := range 1000 {
			s.tenants.count(pad + strconv.Itoa(i))
		}
		s.tenants.mu.Lock()
		for k := range s.tenants.entries {
			distinct[k] = true
		}
		s.tenants.mu.Unlock()
		require.Len(t, distinct, 128, "long keys that differ at the end are told apart")
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for i := range n {
			key := strconv.Itoa(i)
			if i%2 == 0 {
				key = pad + key // long keys that differ at the end only
			}
			tk, err := s.Allow(priority.Default, key)
			require.NoError(t, err)
			tk.Done()
			if i%4 == 0 {
				tk, _ := s.Allow(priority.Default, "noisy")
				tk.Done()
			}
			if i%50_000 == 0 {
				time.Sleep(100 * time.Millisecond) // a tick: counts rotate
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
		t.Logf("%d distinct keys: %d tracked, heap grew by %d bytes", n, s.Stats().Tenants, grew)
		assert.LessOrEqual(t, s.Stats().Tenants, 128)
		assert.Less(t, grew, int64(256<<10), "heap growth")
		s.tenants.mu.Lock()
		_, noisy := s.tenants.entries["noisy"]
		s.tenants.mu.Unlock()
		assert.True(t, noisy, "the noisy tenant is still tracked")
	})
}

func ExampleShedder_Handler_tenants() {
	s, err := New(Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	// The tenant comes from what the server trusts: here an API key that an
	// authentication middleware in front has checked and put in a header
	// of its own, never one the client sets freely.
	h := s.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}), func(r *http.Request) string {
		return r.Header.Get("X-Authenticated-Tenant")
	})
	_ = h
	fmt.Println("ok")
	// Output: ok
}
