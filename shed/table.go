package shed

import (
	"encoding/binary"
	"slices"
	"strings"
	"sync"
)

// maxKey is the longest tenant key kept: a longer one is kept as its head
// and a hash, so that the memory of the table is bounded whatever the keys.
const maxKey = 64

// sampled is how many entries a new key looks at to find one to take.
const sampled = 8

// table counts the default-priority arrivals of the busiest tenants, in a
// fixed number of entries (after the Space-Saving algorithm: a new key
// takes the entry of the least busy of a sample). Its memory is bounded by
// its size, whatever the number of distinct keys; a tenant that sends far
// more than the others keeps its entry.
type table struct {
	mu      sync.Mutex
	size    int
	entries map[string]*entry
}

type entry struct {
	key       string
	cur, last float64 // arrivals this interval and the one before
}

func newTable(size int) *table {
	return &table{size: size, entries: make(map[string]*entry, size)}
}

func (t *table) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.entries)
}

// count records one arrival of key and returns its arrivals in the last
// interval.
func (t *table) count(key string) float64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	var e *entry
	if len(key) <= maxKey {
		if e = t.entries[key]; e == nil {
			e = t.admit(strings.Clone(key)) // key may be a view into a request
		}
	} else {
		// A long key is kept as its head and a hash of the whole, so that
		// keys that differ only at the end stay apart.
		var buf [maxKey]byte
		n := copy(buf[:], key[:maxKey-8])
		binary.LittleEndian.PutUint64(buf[n:], fnv64a(key))
		if e = t.entries[string(buf[:])]; e == nil { // no allocation
			e = t.admit(string(buf[:]))
		}
	}
	e.cur++
	return e.last
}

// fnv64a is the FNV-1a hash of s.
func fnv64a(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// admit gives key an entry: a free one, or the least busy one's. The new
// key starts with no history: a flood of new keys is never shed as a
// tenant, only by priority.
func (t *table) admit(key string) *entry {
	if len(t.entries) < t.size {
		e := &entry{key: key}
		t.entries[key] = e
		return e
	}
	// The least busy of a few entries, from a random place (a map's
	// order): a flood of new keys costs a constant time per key, and a
	// busy tenant, never the least busy of those, keeps its entry.
	var victim *entry
	seen := 0
	for _, e := range t.entries {
		if victim == nil || e.cur+e.last < victim.cur+victim.last {
			victim = e
		}
		if seen++; seen == sampled {
			break
		}
	}
	delete(t.entries, victim.key)
	*victim = entry{key: key}
	t.entries[key] = victim
	return victim
}

// level returns the fair share f of the interval that ended, given that
// want arrivals of default priority are to be refused: the tenants above
// f are cut down to it (water filling), and byTenant is what that
// refuses. f is never below the least busy tracked tenant when the table
// is full (keys it does not track may have as many). f is 0 and byTenant
// 0 when no tenant stands above the others.
func (t *table) level(want float64) (f, byTenant float64) {
	if want <= 0 {
		return 0, 0
	}
	t.mu.Lock()
	counts := make([]float64, 0, len(t.entries))
	for _, e := range t.entries {
		counts = append(counts, e.cur)
	}
	full := len(t.entries) >= t.size
	t.mu.Unlock()
	if len(counts) == 0 {
		return 0, 0
	}
	slices.Sort(counts)
	floor := 0.0
	if full {
		floor = counts[0]
	}
	// Lower the level from the top: with the k busiest above it, the
	// excess is sum(top k) - k*f.
	sum := 0.0
	for k := 1; k <= len(counts); k++ {
		c := counts[len(counts)-k]
		sum += c
		next := floor
		if k < len(counts) {
			next = max(floor, counts[len(counts)-k-1])
		}
		if sum-float64(k)*next >= want {
			f, byTenant = (sum-want)/float64(k), want
			break
		}
		if next == floor {
			f, byTenant = floor, sum-float64(k)*floor
			break
		}
	}
	if f <= 0 || byTenant <= 0 {
		return 0, 0 // nothing to single out: the priority stage refuses evenly
	}
	return f, byTenant
}

// rotate starts a new interval.
func (t *table) rotate() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, e := range t.entries {
		e.last, e.cur = e.cur, 0
	}
}
