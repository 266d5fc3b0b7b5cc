package dashboard

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"time"
)

// stream is one open api/events response. Its frames channel holds at most
// one frame: the sampler replaces a frame the stream has not taken yet by
// the newer one, so a slow browser costs one pointer, never a queue.
type stream struct {
	frames chan *frame
	addr   string    // the client's address, for Options.MaxClientsPerAddress
	start  time.Time // when it joined: the oldest of an address gives way first
	// evict is closed when a page of a less busy address took this
	// stream's place; the stream is no longer counted from then on.
	evict   chan struct{}
	evicted bool // under Handler.mu
}

// run is one life of the sampler goroutine.
type run struct {
	stop chan struct{} // closed to stop it
	done chan struct{} // closed when it has returned
}

// retryMS is how long a page waits before it reconnects a broken stream.
const retryMS = 2000

// serveEvents streams frames as Server-Sent Events until the client goes,
// the handler closes, or a write times out.
func (h *Handler) serveEvents(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodHead {
		setAPIHeaders(w)
		w.Header().Set("Content-Type", "text/event-stream")
		return // a stream has no end to measure
	}
	rc := http.NewResponseController(w)
	s, err := h.join(clientAddress(r), time.Now())
	if err != nil {
		setAPIHeaders(w)
		w.Header().Set("Retry-After", strconv.Itoa(retryMS/1000))
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	defer h.leave(s)
	// What the server writes after the handler returns (the end of the
	// body) must not wait for ever on a client that stopped reading. On
	// HTTP/1 the connection is not used again (Connection: close below),
	// so the deadline cannot reach another request; HTTP/2 deadlines are
	// the stream's own.
	defer func() { _ = rc.SetWriteDeadline(time.Now().Add(h.opts.WriteTimeout)) }()

	hd := w.Header()
	setAPIHeaders(w)
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("X-Accel-Buffering", "no") // ask proxies not to hold events back
	if r.ProtoMajor == 1 {
		hd.Set("Connection", "close")
	}
	w.WriteHeader(http.StatusOK)
	life := time.NewTimer(h.opts.StreamLifetime)
	defer life.Stop()

	// The first event is a full snapshot; the following ones are updates
	// while they follow each other, and full again after a frame was
	// skipped (the page would otherwise miss a point).
	f := h.frameFor(time.Now())
	if !h.send(w, rc, "retry: "+strconv.Itoa(retryMS)+"\n", "snapshot", f.seq, f.full) {
		return
	}
	last := f.seq
	for {
		select {
		case <-r.Context().Done():
			return
		case <-h.quit:
			return
		case <-s.evict:
			return
		case <-life.C:
			// The page reconnects at once on this event (any other
			// EventSource 2 s after the end) and competes for a place
			// like any other page.
			h.send(w, rc, "", "end", last, []byte(`{"reason":"lifetime"}`))
			return
		case f := <-s.frames:
			if f.seq <= last {
				continue // already sent
			}
			event, data := "update", f.delta
			if f.seq != last+1 {
				event, data = "snapshot", f.full
			}
			if !h.send(w, rc, "", event, f.seq, data) {
				return
			}
			last = f.seq
		}
	}
}

// send writes one event and flushes it within Options.WriteTimeout. It
// reports whether the stream may go on.
func (h *Handler) send(w http.ResponseWriter, rc *http.ResponseController, prefix, event string, id uint64, data []byte) bool {
	// A browser that does not read fills the socket's buffer and blocks
	// the write; the deadline turns that into an error that ends only this
	// stream. Writers without deadlines (a test recorder) need none.
	if err := rc.SetWriteDeadline(time.Now().Add(h.opts.WriteTimeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return false
	}
	buf := make([]byte, 0, len(prefix)+len(event)+len(data)+40)
	buf = append(buf, prefix...)
	buf = append(buf, "event: "...)
	buf = append(buf, event...)
	buf = append(buf, "\nid: "...)
	buf = strconv.AppendUint(buf, id, 10)
	buf = append(buf, "\ndata: "...)
	buf = append(buf, data...) // JSON from encoding/json holds no newline
	buf = append(buf, "\n\n"...)
	if _, err := w.Write(buf); err != nil {
		return false
	}
	return rc.Flush() == nil
}

// errTooManyStreams answers a stream beyond Options.MaxClients.
var errTooManyStreams = errors.New("dashboard: too many live pages open (Options.MaxClients); retrying shortly")

// errTooManyFromAddress answers a stream beyond
// Options.MaxClientsPerAddress.
var errTooManyFromAddress = errors.New("dashboard: too many live pages open from this address (Options.MaxClientsPerAddress); retrying shortly")

// clientAddress is the host of r's RemoteAddr (the whole of it when it has
// no port).
func clientAddress(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// errClosed answers a stream after Close.
var errClosed = errors.New("dashboard: closed")

// join registers a new stream, starting the sampler for the first one.
// When every place is taken it evicts the oldest stream of the busiest
// address, if that address holds at least two more than addr.
func (h *Handler) join(addr string, now time.Time) (*stream, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, errClosed
	}
	if h.perAddr[addr] >= h.opts.MaxClientsPerAddress {
		return nil, errTooManyFromAddress
	}
	if len(h.streams) >= h.opts.MaxClients {
		v := h.victimLocked(addr)
		if v == nil {
			return nil, errTooManyStreams
		}
		h.uncountLocked(v)
		v.evicted = true
		close(v.evict)
	}
	s := &stream{frames: make(chan *frame, 1), addr: addr, start: now, evict: make(chan struct{})}
	h.streams[s] = struct{}{}
	h.perAddr[addr]++
	h.live++
	if h.sampler == nil {
		h.sampler = &run{stop: make(chan struct{}), done: make(chan struct{})}
		go h.sample(h.sampler)
	}
	return s, nil
}

// leave unregisters s; the last stream to leave stops the sampler and
// waits until it has returned.
func (h *Handler) leave(s *stream) {
	h.mu.Lock()
	if !s.evicted {
		h.uncountLocked(s)
	}
	var stopped *run
	if len(h.streams) == 0 && h.sampler != nil {
		stopped, h.sampler = h.sampler, nil
		close(stopped.stop)
	}
	h.mu.Unlock()
	if stopped != nil {
		<-stopped.done
	}
	h.mu.Lock()
	if h.live--; h.live == 0 && h.closed {
		close(h.drained)
	}
	h.mu.Unlock()
}

// uncountLocked frees s's place.
func (h *Handler) uncountLocked(s *stream) {
	delete(h.streams, s)
	if h.perAddr[s.addr]--; h.perAddr[s.addr] == 0 {
		delete(h.perAddr, s.addr)
	}
}

// victimLocked returns the stream a page from addr may take the place of:
// the oldest of the address that holds the most, if that is at least two
// more than addr holds (so that two addresses never take turns evicting
// each other), or nil.
func (h *Handler) victimLocked(addr string) *stream {
	most := 0
	for _, n := range h.perAddr {
		most = max(most, n)
	}
	if h.perAddr[addr]+2 > most {
		return nil
	}
	var v *stream
	for s := range h.streams {
		if h.perAddr[s.addr] == most && (v == nil || s.start.Before(v.start)) {
			v = s
		}
	}
	return v
}

// sample is the sampler goroutine: one sample per Interval, handed to every
// stream without waiting for any.
func (h *Handler) sample(r *run) {
	defer close(r.done)
	t := time.NewTicker(h.opts.Interval)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case now := <-t.C:
			h.sampleMu.Lock()
			f := h.sampleLocked(now)
			h.sampleMu.Unlock()
			h.mu.Lock()
			for s := range h.streams {
				offer(s.frames, f)
			}
			h.mu.Unlock()
		}
	}
}

// offer puts f in ch, replacing a frame the stream has not taken yet. Only
// the sampler sends on ch, under h.mu, so the second send cannot block.
func offer(ch chan *frame, f *frame) {
	select {
	case ch <- f:
		return
	default:
	}
	select {
	case <-ch:
	default:
	}
	select {
	case ch <- f:
	default:
	}
}

// Close ends every stream and stops the sampler; new streams get 503
// Service Unavailable, while the page and the snapshot endpoint keep
// working. It waits for the streams' goroutines to return, which each does
// within Options.WriteTimeout, or until ctx ends (then it returns
// ctx.Err()). Close is idempotent. It returns an error, and does nothing,
// on a zero Handler (which New did not make) or with a nil ctx.
func (h *Handler) Close(ctx context.Context) error {
	switch {
	case !h.made():
		return errUnmade
	case ctx == nil:
		return errors.New("dashboard: Close with a nil context (use context.Background())")
	}
	h.mu.Lock()
	if !h.closed {
		h.closed = true
		close(h.quit)
		if h.live == 0 {
			close(h.drained)
		}
	}
	h.mu.Unlock()
	select {
	case <-h.drained:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
