package fleet

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// hub is an in-process backend with a modelled one-way latency, for running
// the link's real logic (rules, leases, holds) inside a synctest bubble,
// where a real Redis cannot go. It keeps what Redis keeps: the open keys
// with their expiry, the leases, the subscribers.
type hub struct {
	latency time.Duration

	// What Redis would have carried: commands (a MULTI's commands each,
	// without MULTI and EXEC), messages delivered to subscribers, and
	// their bytes.
	cmds, msgs, bytes atomic.Int64

	// refuse fails that many announces while the hub stays up and its
	// subscriptions keep delivering, as a cluster client with a stale slot
	// map does for one lane after a failover.
	refuse atomic.Int32

	mu     sync.Mutex
	down   bool // every operation fails, as with Redis stopped
	subs   map[*hubFeed]struct{}
	keys   map[string]hubKey // the open keys
	leases map[string]hubKey // payload: the holder
	seq    int64             // the operator actions' counter
	acts   map[string]hubAct // the stored operator actions
	states map[string]hubKey // the view: supplier + "/" + replica
	votes  map[string]map[string]time.Time
	beats  map[string]time.Time // heartbeats
}

type hubAct struct {
	seq int64
	msg []byte
}

type hubKey struct {
	payload []byte
	expires time.Time
}

func newHub(latency time.Duration) *hub {
	return &hub{latency: latency, subs: map[*hubFeed]struct{}{}, keys: map[string]hubKey{}, leases: map[string]hubKey{},
		acts: map[string]hubAct{}, states: map[string]hubKey{}, votes: map[string]map[string]time.Time{}, beats: map[string]time.Time{}}
}

// after runs f after the latency, as a message on the wire would arrive.
func (h *hub) after(f func()) {
	if h.latency <= 0 {
		f()
		return
	}
	time.AfterFunc(h.latency, f)
}

var errHubDown = errors.New("hub: down")

// setDown stops or restarts the hub; stopping it ends every subscription
// and forgets every key, as a Redis restarted without persistence would.
func (h *hub) setDown(down bool) {
	h.mu.Lock()
	h.down = down
	subs := h.subs
	if down {
		h.subs = map[*hubFeed]struct{}{}
		clear(h.keys)
		clear(h.leases)
		clear(h.acts)
		clear(h.votes)
		clear(h.beats)
		h.seq = 0
	}
	h.mu.Unlock()
	if down {
		for f := range subs {
			_ = f.close()
		}
	}
}

func (h *hub) isDown() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.down
}

func (h *hub) publish(msg []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.msgs.Add(int64(len(h.subs)))
	h.bytes.Add(int64(len(h.subs) * len(msg)))
	for f := range h.subs {
		h.after(func() { f.push(hubItem{payload: msg}) })
	}
}

func (h *hub) subscribe(context.Context) (feed, error) {
	h.cmds.Add(1)
	if h.isDown() {
		return nil, errHubDown
	}
	f := &hubFeed{h: h, ch: make(chan hubItem, 4096), done: make(chan struct{})}
	h.mu.Lock()
	h.subs[f] = struct{}{}
	h.mu.Unlock()
	return f, nil
}

func (h *hub) announce(_ context.Context, name string, stored []byte, ttl time.Duration, msg []byte) error {
	h.cmds.Add(3) // SET, SADD, PUBLISH
	if h.isDown() {
		return errHubDown
	}
	for n := h.refuse.Load(); n > 0; n = h.refuse.Load() {
		if h.refuse.CompareAndSwap(n, n-1) {
			return errHubRefused
		}
	}
	h.mu.Lock()
	h.keys[name] = hubKey{payload: stored, expires: time.Now().Add(ttl)}
	h.mu.Unlock()
	h.publish(msg)
	return nil
}

var errHubRefused = errors.New("hub: refused (connection refused by a lost master)")

func (h *hub) withdraw(_ context.Context, name string, stored []byte, ttl time.Duration, msg []byte) error {
	h.cmds.Add(3) // SET, SADD, PUBLISH
	if h.isDown() {
		return errHubDown
	}
	h.mu.Lock()
	h.keys[name] = hubKey{payload: stored, expires: time.Now().Add(ttl)}
	h.mu.Unlock()
	h.publish(msg)
	return nil
}

func (h *hub) opens(_ context.Context, _ time.Duration, want func(string) bool) ([]storedOpen, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.down {
		return nil, errHubDown
	}
	var live []storedOpen
	now := time.Now()
	for name, k := range h.keys {
		if left := k.expires.Sub(now); left > 0 && want(name) {
			live = append(live, storedOpen{payload: k.payload, left: left})
		}
	}
	h.cmds.Add(int64(1 + 2*len(live))) // SSCAN, then GET and PTTL each
	return live, nil
}

func (h *hub) acquire(_ context.Context, name, replica string, ttl time.Duration) (bool, time.Duration, error) {
	h.cmds.Add(2) // SET NX, PTTL
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.down {
		return false, 0, errHubDown
	}
	now := time.Now()
	if k, ok := h.leases[name]; ok && k.expires.After(now) {
		return false, k.expires.Sub(now), nil
	}
	h.leases[name] = hubKey{payload: []byte(replica), expires: now.Add(ttl)}
	return true, 0, nil
}

func (h *hub) renew(_ context.Context, name, replica string, ttl time.Duration) (bool, error) {
	h.cmds.Add(1) // EVALSHA
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.down {
		return false, errHubDown
	}
	now := time.Now()
	if k, ok := h.leases[name]; ok && k.expires.After(now) && string(k.payload) == replica {
		h.leases[name] = hubKey{payload: k.payload, expires: now.Add(ttl)}
		return true, nil
	}
	return false, nil
}

func (h *hub) release(_ context.Context, name, replica string) error {
	h.cmds.Add(1) // EVALSHA
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.down {
		return errHubDown
	}
	if k, ok := h.leases[name]; ok && string(k.payload) == replica {
		delete(h.leases, name)
	}
	return nil
}

func (h *hub) act(_ context.Context, name string, reset bool, build func(int64) []byte) (int64, error) {
	h.cmds.Add(2) // INCR, EVALSHA
	h.mu.Lock()
	if h.down {
		h.mu.Unlock()
		return 0, errHubDown
	}
	h.seq++
	seq := h.seq
	h.mu.Unlock()
	msg := build(seq)
	if h.put(name, seq, msg, reset) {
		h.publish(msg)
	}
	return seq, nil
}

func (h *hub) restore(_ context.Context, name string, seq int64, msg []byte) error {
	h.cmds.Add(1) // EVALSHA
	if h.isDown() {
		return errHubDown
	}
	if h.put(name, seq, msg, false) {
		h.publish(msg)
	}
	return nil
}

// put stores an action unless a newer one is stored, as putOverride does.
func (h *hub) put(name string, seq int64, msg []byte, reset bool) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq = max(h.seq, seq)
	if h.acts[name].seq >= seq {
		return false
	}
	h.acts[name] = hubAct{seq: seq, msg: msg}
	if reset {
		delete(h.keys, name)
	}
	return true
}

func (h *hub) overrides(_ context.Context, _ time.Duration, want func(string) bool) ([]storedOpen, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.down {
		return nil, errHubDown
	}
	h.cmds.Add(int64(2 + len(h.acts))) // SMEMBERS, then HGET each and GET of the counter
	var out []storedOpen
	for name, a := range h.acts {
		if want(name) {
			out = append(out, storedOpen{payload: a.msg, limit: h.seq})
		}
	}
	return out, nil
}

func (h *hub) counter(context.Context, string) (string, int64, error) {
	h.cmds.Add(1) // GET
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.down {
		return "", 0, errHubDown
	}
	return "", h.seq, nil
}

func (h *hub) vote(_ context.Context, name, replica string, q Quorum, stored []byte, ttl time.Duration, msg []byte) (bool, error) {
	h.cmds.Add(1) // EVALSHA
	h.mu.Lock()
	if h.down {
		h.mu.Unlock()
		return false, errHubDown
	}
	now := time.Now()
	vs := h.votes[name]
	if vs == nil {
		vs = map[string]time.Time{}
		h.votes[name] = vs
	}
	vs[replica] = now
	for r, at := range vs {
		if now.Sub(at) > q.Window {
			delete(vs, r)
		}
	}
	k, ok := h.keys[name]
	open := ok && k.expires.After(now) && strings.Contains(string(k.payload), `"kind":"open"`)
	announced := open || len(vs) >= q.Replicas
	if announced {
		h.keys[name] = hubKey{payload: stored, expires: now.Add(ttl)}
	}
	h.mu.Unlock()
	h.publish(msg) // every vote travels: receivers count the quorum
	return announced, nil
}

func (h *hub) report(_ context.Context, name, replica string, state []byte, ttl time.Duration) error {
	h.cmds.Add(3) // SET, SADD, PEXPIRE
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.down {
		return errHubDown
	}
	h.states[name+"/"+replica] = hubKey{payload: state, expires: time.Now().Add(ttl)}
	return nil
}

func (h *hub) view(_ context.Context, name string) (map[string]storedOpen, int, string, time.Duration, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.down {
		return nil, 0, "", 0, errHubDown
	}
	now := time.Now()
	out := map[string]storedOpen{}
	for k, v := range h.states {
		if rep, ok := strings.CutPrefix(k, name+"/"); ok && v.expires.After(now) {
			out[rep] = storedOpen{payload: v.payload, left: v.expires.Sub(now)}
		}
	}
	if l, ok := h.leases[name]; ok && l.expires.After(now) {
		return out, 0, string(l.payload), l.expires.Sub(now), nil
	}
	return out, 0, "", 0, nil
}

type hubItem struct {
	payload []byte // nil: a pong
}

type hubFeed struct {
	h    *hub
	ch   chan hubItem
	once sync.Once
	done chan struct{}
}

func (f *hubFeed) push(it hubItem) {
	select {
	case f.ch <- it:
	case <-f.done:
	}
}

// hubTimeout is what a receive returns when nothing came in time.
type hubTimeout struct{}

func (hubTimeout) Error() string { return "hub: receive timeout" }
func (hubTimeout) Timeout() bool { return true }

var errHubClosed = errors.New("hub: subscription closed")

func (f *hubFeed) receive(_ context.Context, timeout time.Duration) ([]byte, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case it := <-f.ch:
		return it.payload, nil
	case <-t.C:
		return nil, hubTimeout{}
	case <-f.done:
		return nil, errHubClosed
	}
}

func (f *hubFeed) ping(context.Context) error {
	f.h.cmds.Add(1)
	f.h.after(func() { f.push(hubItem{}) })
	return nil
}

func (f *hubFeed) close() error {
	f.once.Do(func() {
		f.h.mu.Lock()
		delete(f.h.subs, f)
		f.h.mu.Unlock()
		close(f.done)
	})
	return nil
}

func (h *hub) beat(_ context.Context, replica string, window time.Duration) (int, error) {
	h.cmds.Add(1) // EVALSHA
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.down {
		return 0, errHubDown
	}
	now := time.Now()
	h.beats[replica] = now
	for r, at := range h.beats {
		if now.Sub(at) > window {
			delete(h.beats, r)
		}
	}
	return len(h.beats), nil
}
