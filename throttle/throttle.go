package throttle

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fusebox-go/fusebox/priority"
)

// Config configures a Throttle. The zero value is ready to use.
type Config struct {
	// Window is how far back requests and accepts count. 0 means 10 s;
	// it must be at least 10 ms.
	Window time.Duration
	// MinRequests is the number of requests of a priority the window
	// must hold before the throttle rejects any of that priority. 0 means
	// 20; it must not be negative.
	MinRequests int
	// K is the multiplier of accepts that requests may reach, per
	// priority (indexed by priority.Priority). 0 means the default:
	// 2 for Critical, 1.02 for Default, 1 for Sheddable. Each must be
	// at least 1 (below that a healthy supplier is throttled). A supplier
	// that fails more than 1 − 1/K of its calls is throttled as overloaded.
	K [priority.Levels]float64
}

// defaultK is K's zero value, per priority.
var defaultK = [priority.Levels]float64{
	priority.Default:   1.02,
	priority.Critical:  2,
	priority.Sheddable: 1,
}

// buckets is the number of buckets the window is divided into.
const buckets = 40

// Throttle decides, request by request, whether to send it on. Make one
// with New. It is safe for concurrent use.
type Throttle struct {
	cfg    Config // as given to New
	shift  uint   // a bucket spans 1<<shift ns
	min    uint64
	k      [priority.Levels]float64
	epoch  atomic.Int64            // the newest bucket's number (now / width)
	shards atomic.Pointer[[]shard] // the counts, in copies concurrent requests add to (see acquire); nil until one does
	nshard int                     // how many shards there are, or will be
	free   sync.Pool               // *shard: the one each P added to last
	next   atomic.Uint32           // the shard the next P without one takes
	marks  [buckets]atomic.Int64   // per bucket: the bucket number it counts for
	levels [priority.Levels]level  // per priority: the window's state
}

// A shard is one copy of the window's counts: per bucket and priority,
// requests, sent and failed, 21 bits each (see reqUnit). A bucket's
// counts are the sums over the shards (see count). Each P adds to a shard
// of its own where it can, so that concurrent requests do not write one
// cache line: that is what counting every request costs in parallel.
type shard struct {
	counts [buckets][priority.Levels]atomic.Uint64
	// Pads the shard to a multiple of 128 bytes (a pair of cache lines,
	// which some CPUs fetch together), so no line is written by two.
	_ [(128 - shardBytes%128) % 128]byte
}

const (
	shardBytes = buckets * int(priority.Levels) * 8
	// maxShards bounds the memory of a Throttle (1 KiB a shard); beyond
	// it, Ps share shards.
	maxShards = 8
)

// level is the state of one priority's window: each priority's odds come
// from its own counts, so that a supplier that refuses sheddable calls and
// accepts critical ones throttles only the sheddable ones.
type level struct {
	odds      atomic.Uint64 // rejection probability, as math.Float64bits, from the buckets before the newest
	throttled atomic.Uint64
	// probe is set while the last tenth of the window holds no request
	// of this priority sent: the next one that the odds reject is sent
	// all the same, as evidence of whether the supplier accepts again
	// (see recompute).
	probe atomic.Bool
	// since is the oldest bucket the window counts: recompute moves it up
	// when the load falls after an overload (see recompute).
	since atomic.Int64
}

// New returns a Throttle, or an error naming every invalid field of cfg.
func New(cfg Config) (*Throttle, error) {
	given := cfg
	var errs []error
	if cfg.Window == 0 {
		cfg.Window = 10 * time.Second
	}
	if cfg.Window < 10*time.Millisecond {
		errs = append(errs, fmt.Errorf("throttle: Config.Window must be 0 or at least 10ms, got %v", cfg.Window))
	}
	if cfg.MinRequests < 0 {
		errs = append(errs, fmt.Errorf("throttle: Config.MinRequests must be ≥ 0, got %d", cfg.MinRequests))
	}
	if cfg.MinRequests == 0 {
		cfg.MinRequests = 20
	}
	// A bucket spans a power of two of nanoseconds, the nearest to a
	// fortieth of the window, so that finding one is a shift.
	t := &Throttle{cfg: given, shift: uint(math.Round(math.Log2(float64(cfg.Window) / buckets))), min: uint64(cfg.MinRequests)}
	for p, k := range cfg.K {
		switch {
		case k == 0:
			k = defaultK[p]
		case math.IsNaN(k) || math.IsInf(k, 0) || k < 1:
			errs = append(errs, fmt.Errorf("throttle: Config.K[%s] must be 0 or a number ≥ 1, got %v", priority.Priority(p), k))
		}
		t.k[p] = k
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	t.nshard = min(runtime.GOMAXPROCS(0), maxShards)
	t.epoch.Store(math.MinInt64)
	for p := range t.levels {
		t.levels[p].since.Store(math.MinInt64)
	}
	return t, nil
}

// Config returns the configuration New was given.
func (t *Throttle) Config() Config { return t.cfg }

// Admit counts a request the application attempts at now (nanoseconds on
// a monotonic clock of the caller's), and reports whether to send it:
// false means reject it locally. A request sent must end with Record; a
// rejected one must not (it already counts as a request, and it never
// counts against the supplier).
func (t *Throttle) Admit(now int64, p priority.Priority) bool {
	if p >= priority.Levels {
		p = priority.Sheddable
	}
	i := t.advance(now)
	l := &t.levels[p]
	odds := math.Float64frombits(l.odds.Load())
	rejected := odds > 0 && rand.Float64() < odds && !l.forced()
	c := uint64(reqUnit | sentUnit)
	if rejected {
		c = reqUnit
		l.throttled.Add(1)
	}
	s := t.acquire()
	s.counts[i][p].Add(c)
	t.release(s)
	return !rejected
}

// Record ends a request of priority p that Admit let through, at now:
// accepted reports whether the supplier accepted it (answered it, even
// with an error of the caller's own), rather than refusing or failing it
// for overload. p must be the priority Admit was given.
func (t *Throttle) Record(now int64, p priority.Priority, accepted bool) {
	if accepted {
		return // counted as sent, which is accepted until it fails
	}
	if p >= priority.Levels {
		p = priority.Sheddable
	}
	i := t.advance(now)
	s := t.acquire()
	s.counts[i][p].Add(failUnit)
	t.release(s)
}

// acquire returns the shard to add to, to be given back with release: the
// one this P added to last, which t.free keeps per P, or else (a P's first
// request, or after a garbage collection emptied t.free) the next in turn.
// Without a P of its own, a shard's line would move between cores on
// most requests, as one shared line does.
func (t *Throttle) acquire() *shard {
	if t.nshard == 1 {
		return &t.made()[0] // GOMAXPROCS was 1: no pool to ask
	}
	if s, ok := t.free.Get().(*shard); ok {
		return s
	}
	return &t.made()[t.next.Add(1)%uint32(t.nshard)]
}

// release gives back a shard that acquire returned.
func (t *Throttle) release(s *shard) {
	if t.nshard > 1 {
		t.free.Put(s)
	}
}

// made returns the shards, which the first request makes: a throttle
// that is never called holds no counts.
func (t *Throttle) made() []shard {
	if sh := t.shards.Load(); sh != nil {
		return *sh
	}
	sh := make([]shard, t.nshard)
	if !t.shards.CompareAndSwap(nil, &sh) {
		return *t.shards.Load()
	}
	return sh
}

// count returns bucket j's counts of priority p: the sum over the shards.
// Each of its fields is below 1<<fieldBits (see fieldBits), so the sum
// of the packed words is the packed sum.
func (t *Throttle) count(j int, p priority.Priority) uint64 {
	var c uint64
	if sh := t.shards.Load(); sh != nil {
		for s := range *sh {
			c += (*sh)[s].counts[j][p].Load()
		}
	}
	return c
}

// forced reports whether a request the odds reject is to be sent as a
// probe (see level.probe), and takes the probe if so.
func (l *level) forced() bool {
	return l.probe.Load() && l.probe.CompareAndSwap(true, false)
}

// A bucket's counts: requests (attempted), sent (admitted) and failed
// (sent, and not accepted), 21 bits each, so that Admit adds both of its
// counts in one atomic add and an accepted request costs Record nothing.
// 2 million of each in a bucket (a fortieth of the window) is beyond any
// client of one supplier.
const (
	fieldBits = 21
	fieldMask = 1<<fieldBits - 1
	failUnit  = 1
	sentUnit  = 1 << fieldBits
	reqUnit   = 1 << (2 * fieldBits)
)

// field returns the requests, sent and failed of a bucket's counts.
func field(c uint64) (req, sent, failed uint64) {
	return c >> (2 * fieldBits) & fieldMask, c >> fieldBits & fieldMask, c & fieldMask
}

// advance makes the bucket of now current if it is not yet, and returns
// its index. The first request of a new bucket computes the odds from the
// buckets before it, so that every other request reads them with one load.
func (t *Throttle) advance(now int64) int {
	n := now >> t.shift
	i := int(uint64(n) % buckets)
	if t.marks[i].Load() == n {
		return i
	}
	// A new bucket: clear it for n (a request of the bucket it held,
	// buckets ago, that ends only now counts here instead; harmless).
	old := t.marks[i].Load()
	if old < n && t.marks[i].CompareAndSwap(old, n) {
		if sh := t.shards.Load(); sh != nil {
			for s := range *sh {
				for p := range (*sh)[s].counts[i] {
					(*sh)[s].counts[i][p].Store(0)
				}
			}
		}
	}
	if e := t.epoch.Load(); e < n && t.epoch.CompareAndSwap(e, n) {
		t.recompute(n)
	}
	return i
}

// recompute sets each priority's odds from its own counts in the buckets
// of the window before bucket n: the long window in a steady state, the
// short span at an overload's onset, 0 as soon as the load has fallen, a
// restart once it stays down, and shrinking odds over a clean run
// (docs/throttle.md, "The formula").
func (t *Throttle) recompute(n int64) {
	for p := range t.levels {
		t.recomputeLevel(n, priority.Priority(p))
	}
}

// recomputeLevel sets the odds of priority p from its own counts.
func (t *Throttle) recomputeLevel(n int64, p priority.Priority) {
	l := &t.levels[p]
	var byAge [buckets - 1]uint64 // the window's buckets; 0 is the one before n
	since := l.since.Load()
	spanned := int64(0) // buckets the window covers
	for j := range buckets {
		m := t.marks[j].Load()
		if m >= n || m <= n-buckets || m < since {
			continue
		}
		byAge[n-1-m] = t.count(j, p)
		spanned = max(spanned, n-m)
	}
	var long, short struct{ req, sent, failed uint64 }
	clean, failing := 0, false // buckets sent to and not failed, newest first
	for age, c := range byAge {
		req, sent, failed := field(c)
		switch {
		case failed > 0:
			failing = true
		case sent > 0 && !failing:
			clean++
		}
		long.req, long.sent, long.failed = long.req+req, long.sent+sent, long.failed+failed
		if age < shortBuckets {
			short.req, short.sent, short.failed = short.req+req, short.sent+sent, short.failed+failed
		}
	}
	// A request sent in one bucket may fail in the next: accepts are sent
	// less failed, never below 0.
	longAcc, shortAcc := accepts(long.sent, long.failed), accepts(short.sent, short.failed)
	healthy := short.sent > 0 && float64(shortAcc) >= healthyShare*float64(short.sent)
	failing = float64(shortAcc) < onsetShare*float64(short.sent)
	// A client that sends little may have sent nothing in the short span:
	// the next request the odds reject goes out all the same, as evidence.
	l.probe.Store(short.sent == 0 && long.req > 0)
	older := spanned - shortBuckets // the window's buckets before the short span
	if healthy && older > shortBuckets &&
		float64(short.req)*float64(older) <= dropShare*float64(long.req-short.req)*shortBuckets {
		l.since.Store(n)
		long.req, longAcc = 0, 0
	}
	o := odds(long.req, longAcc, t.k[p])
	if so := odds(short.req, shortAcc, t.k[p]); failing && so > o+onsetMargin {
		o = so
	}
	o *= max(0, 1-float64(max(0, clean-cleanGrace))/cleanScale)
	if long.req < t.min || fallen(&byAge, spanned, long.req, l.odds.Load() == 0) {
		o = 0
	}
	l.odds.Store(math.Float64bits(o))
}

const (
	// shortBuckets is the short span of recompute: a tenth of the window.
	shortBuckets = buckets / 10
	// healthyShare is the share of the requests sent that the supplier
	// must accept over the short span for recompute to call it healthy.
	healthyShare = 0.95
	// onsetShare: the supplier accepting less than this share of what it
	// was sent over the short span is an overload's onset, not the
	// failures a steady one brings at K near 1.
	onsetShare = 0.8
	// onsetMargin is how far the short span's odds must exceed the long
	// window's to decide: less, and the short span's noise (a second of
	// one client's requests) makes the odds wander.
	onsetMargin = 0.1
	// dropShare is the fall in the request rate, short span against the
	// rest of the window, that restarts the window: to a third or less,
	// well below what a second of a client's requests varies by at random.
	dropShare = 1.0 / 3
	// fallShare is the fall in the request rate, newest two to four
	// buckets against the rest of the window, that sets the odds to 0
	// without restarting it (see fallen): to half or less, which two
	// buckets of a client's steady overload at 2 × C show about once in
	// 200. stayShare keeps them at 0 while what they send in full is
	// accepted, since a client's demand just after an overload varies by
	// more than half from one bucket to the next; for two buckets sent in
	// full at most, so that a lull of a steady overload, where failures
	// show a time-out later, does not let a whole second through.
	fallShare = 1.0 / 2
	stayShare = 2.0 / 3
	// cleanGrace and cleanScale: after cleanGrace buckets in a row sent
	// to without a failure (2 s: shorter, and the quiet spells of a
	// steady overload at K near 1 raise the supplier's load), each
	// further one takes 1/cleanScale off the odds, 0 some 10 s later.
	cleanGrace = 2 * shortBuckets
	cleanScale = buckets - 1
)

// fallen reports whether the newest buckets show the demand fallen well
// below the rest of the window's, with the supplier accepting what they
// sent: for some j from 2 to shortBuckets, the newest j buckets hold at
// most fallShare of the requests the older buckets' rate gives j buckets
// and failed at most 1 − healthyShare of what they sent; or, once the odds
// are 0 and the newest bucket, but not the third newest, sent every
// request it held, the newest two hold at most stayShare and none failed.
// The window is kept, so a quiet spell of a steady overload costs a few
// buckets sent in full (docs/throttle.md, "The formula").
func fallen(byAge *[buckets - 1]uint64, spanned int64, longReq uint64, wasZero bool) bool {
	r0, s0, f0 := field(byAge[0])
	r2, s2, _ := field(byAge[2])
	inFull := wasZero && r0 > 0 && s0 == r0 && f0 == 0 && !(r2 > 0 && s2 == r2)
	var req, sent, failed uint64
	for j := range shortBuckets {
		r, s, f := field(byAge[j])
		req, sent, failed = req+r, sent+s, failed+f
		older := spanned - int64(j+1) // buckets before the newest j+1
		if j == 0 || older <= shortBuckets {
			continue
		}
		share := fallShare
		if inFull && failed == 0 && j == 1 {
			share = stayShare
		}
		if float64(failed) <= (1-healthyShare)*float64(sent) &&
			float64(req)*float64(older) <= share*float64(longReq-req)*float64(j+1) {
			return true
		}
	}
	return false
}

func accepts(sent, failed uint64) uint64 {
	if failed > sent {
		return 0
	}
	return sent - failed
}

// odds is the SRE formula.
func odds(req, acc uint64, k float64) float64 {
	if req == 0 {
		return 0
	}
	return max(0, (float64(req)-k*float64(acc))/float64(req+1))
}

// Stats is a snapshot of a Throttle.
type Stats struct {
	// Requests and Accepts are the window's counts, without the newest
	// bucket's: the sums of ByPriority's.
	Requests, Accepts uint64
	// ByPriority holds each priority's counts, from which its odds come.
	ByPriority [priority.Levels]Counts
	// Odds is the probability of rejecting a request, per priority.
	Odds [priority.Levels]float64
	// Throttled counts the requests rejected locally, per priority, since
	// New.
	Throttled [priority.Levels]uint64
}

// Counts are a window's requests (sent or rejected locally) and accepts.
type Counts struct {
	Requests, Accepts uint64
}

// Stats returns the state of the throttle as of its newest bucket.
func (t *Throttle) Stats() Stats {
	var s Stats
	n := t.epoch.Load()
	for p := range t.levels {
		l, c := &t.levels[p], &s.ByPriority[p]
		since := l.since.Load()
		for j := range buckets {
			if m := t.marks[j].Load(); m < n && m > n-buckets && m >= since {
				req, sent, failed := field(t.count(j, priority.Priority(p)))
				c.Requests += req
				c.Accepts += accepts(sent, failed)
			}
		}
		s.Requests += c.Requests
		s.Accepts += c.Accepts
		s.Odds[p] = math.Float64frombits(l.odds.Load())
		s.Throttled[p] = l.throttled.Load()
	}
	return s
}
