package dashboard

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fusebox-go/fusebox/executor"
)

//go:embed static
var static embed.FS

// Options configures a Handler. The zero value is ready to use: a page that
// updates every second, shows the last two minutes, serves 8 live pages at
// once (4 per client address, each for 2 min at a time), accepts any Host
// and offers no operator actions.
type Options struct {
	// Title heads the page. "" means "fusebox".
	Title string
	// Interval is the time between two samples of every supplier's stats,
	// and so between two events of a stream, and the step of the
	// sparklines. 0 means 1 s; it must lie between 100 ms and 1 min.
	Interval time.Duration
	// History is the number of points each sparkline keeps (per-second
	// rates, one per Interval). 0 means 120: two minutes at 1 s. At most
	// 3600. Only suppliers that saw calls in the last History samples keep
	// one (about 36 bytes a point), so idle suppliers cost nothing.
	History int
	// MaxClients bounds the live pages (event streams) served at once; one
	// more gets 503 Service Unavailable and its page retries a few seconds
	// later. 0 means 8.
	MaxClients int
	// MaxClientsPerAddress bounds the live pages of one client address
	// (the host of the request's RemoteAddr), so that one browser or
	// script cannot take every place of MaxClients. When every place is
	// taken, a page from an address that holds at least two fewer than
	// the busiest address takes the place of that address's oldest stream.
	// 0 means half of MaxClients, at least 1. Behind a reverse proxy every
	// page comes from the proxy's address: set it to MaxClients there.
	MaxClientsPerAddress int
	// StreamLifetime ends each live page's stream after that long, with
	// an "end" event; the page reconnects at once (an EventSource of
	// another script 2 s later) and gets a full snapshot. It bounds how
	// long a client that stopped reading, whose buffers still take the
	// events, holds its place. 0 means 2 min; at least 1 s.
	StreamLifetime time.Duration
	// MaxSuppliers bounds the tiles of one snapshot, trouble first; the
	// rest are counted in Snapshot.Total. 0 means 200.
	MaxSuppliers int
	// WriteTimeout bounds the time one event may take to reach a browser; a
	// stream whose browser does not read for that long is ended (the page
	// reconnects if it is still there). 0 means 10 s. Each event sets its
	// own write deadline, so the server's WriteTimeout does not cut a
	// stream.
	WriteTimeout time.Duration
	// AllowControl offers operator actions on the page: trip, force open
	// and reset a supplier's breaker, each after a confirmation, sent as a
	// POST that must carry the X-Fusebox-Control header and, if the browser
	// sends an Origin, come from the page's own origin. Off by default.
	// Mount a handler with AllowControl only on an admin listener that only
	// operators can reach: the handler has no authentication of its own.
	// A control request must also name the dashboard's host by address
	// (127.0.0.1:9090, [::1]:9090), as localhost, or as one of
	// ControlHosts: a page of another site that rebinds its own domain name
	// to the admin listener's address is same-origin to the browser, and
	// only its Host header gives it away.
	AllowControl bool
	// ControlHosts lists the host names (without a port) under which
	// operators reach the dashboard, when not by address or as localhost,
	// e.g. "admin.internal". nil means none.
	ControlHosts []string
	// AllowedHosts, if not empty, turns on a Host check for every request,
	// GETs included: the Host must name the dashboard by address, as
	// localhost, or as one of these names (without a port); any other gets
	// 421 Misdirected Request. It keeps a page of another site that rebinds
	// its domain to the listener's address from reading the suppliers.
	// Control requests accept these names too. nil means any Host.
	AllowedHosts []string
	// Control, if set, carries out the page's operator actions instead of
	// the handler acting on this process's breaker: supplier is the
	// executor's name, action "trip", "force-open" or "reset", reason the
	// request's (possibly empty). A fleet link's Control method makes them
	// fleet-wide. An error is answered as 502 Bad Gateway with its text.
	Control func(ctx context.Context, supplier, action, reason string) error
	// FleetView, if set, shows on each tile, when it is expanded, how
	// the other replicas of a linked fleet see the supplier: the page
	// asks GET api/fleet?supplier=<ID>, and the handler calls FleetView
	// with the executor's name at most once per supplier every 2 s
	// (within 2 s; later requests get the same answer) and answers its
	// result as JSON. A fleet link's FleetView method fits. The page
	// draws the fields "replicas" (each with "replica", "state",
	// "reason", "for_ns", "probe_in_ns"), "prober", "prober_left_ns" and
	// "override" ("Action", "Reason", "Replica", "Seq"). An error is
	// answered as 502 Bad Gateway with its text.
	FleetView func(ctx context.Context, supplier string) (any, error)
	// Logger receives one record per operator action, and an error for
	// each executor or group that Add or AddGroup refused (nil, or not
	// made by its constructor), since they have no error to return. nil
	// means slog.Default().
	Logger *slog.Logger
}

// Limits of Options.
const (
	minInterval = 100 * time.Millisecond
	maxInterval = time.Minute
	maxHistory  = 3600
)

// validate fills in the defaults and names every invalid field.
func (o *Options) validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("dashboard: "+format, args...)) }
	if o.Title == "" {
		o.Title = "fusebox"
	}
	if o.Interval == 0 {
		o.Interval = time.Second
	}
	if o.Interval < minInterval || o.Interval > maxInterval {
		bad("Options.Interval must be between %v and %v, got %v", minInterval, maxInterval, o.Interval)
	}
	if o.History == 0 {
		o.History = 120
	}
	if o.History < 1 || o.History > maxHistory {
		bad("Options.History must be between 1 and %d, got %d", maxHistory, o.History)
	}
	o.validateClients(bad)
	if o.MaxSuppliers == 0 {
		o.MaxSuppliers = 200
	}
	if o.MaxSuppliers < 1 {
		bad("Options.MaxSuppliers must be ≥ 1 (0: 200), got %d", o.MaxSuppliers)
	}
	if o.StreamLifetime == 0 {
		o.StreamLifetime = 2 * time.Minute
	}
	if o.StreamLifetime < time.Second {
		bad("Options.StreamLifetime must be ≥ 1s (0: 2m), got %v", o.StreamLifetime)
	}
	for i, n := range o.AllowedHosts {
		if n == "" || strings.ContainsAny(n, ":/ ") {
			bad("Options.AllowedHosts[%d] must be a host name or address without a port, got %q", i, n)
		}
	}
	if o.WriteTimeout == 0 {
		o.WriteTimeout = 10 * time.Second
	}
	if o.WriteTimeout < 0 {
		bad("Options.WriteTimeout must be > 0 (0: 10s), got %v", o.WriteTimeout)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return errors.Join(errs...)
}

// validateClients fills in and checks the limits on live pages.
func (o *Options) validateClients(bad func(format string, args ...any)) {
	if o.MaxClients == 0 {
		o.MaxClients = 8
	}
	if o.MaxClients < 1 {
		bad("Options.MaxClients must be ≥ 1 (0: 8), got %d", o.MaxClients)
	}
	if o.MaxClientsPerAddress == 0 {
		o.MaxClientsPerAddress = max(1, o.MaxClients/2)
	}
	if o.MaxClientsPerAddress < 1 || o.MaxClientsPerAddress > o.MaxClients {
		bad("Options.MaxClientsPerAddress must lie between 1 and MaxClients (%d) (0: half of it), got %d", o.MaxClients, o.MaxClientsPerAddress)
	}
}

// Handler serves the dashboard of the executors and groups added to it:
//
//	GET  /                the page (HTML, script and style embedded; works offline)
//	GET  /api/snapshot    the current Snapshot as JSON, for scripts and curl
//	GET  /api/events      the Snapshot as a stream of Server-Sent Events
//	POST /api/control     operator actions, only with Options.AllowControl
//	GET  /api/fleet       ?supplier=<ID>: the fleet's view, only with Options.FleetView
//
// Mount it under a prefix with http.StripPrefix (the page uses relative
// URLs). It is safe for concurrent use. It runs a sampler goroutine only
// while a stream is open; call Close, which ends the streams and waits for
// them, before http.Server.Shutdown (docs/dashboard.md).
type Handler struct {
	opts  Options
	files http.Handler

	mu       sync.Mutex
	sources  []source
	policies []policies // AddPolicies
	sheds    shedBoard  // AddShedder
	streams  map[*stream]struct{}
	perAddr  map[string]int // live streams by client address
	closed   bool
	quit     chan struct{} // closed by Close: every stream ends
	sampler  *run          // nil while no stream is open
	// live counts the streams that have not fully left (a stream leaves
	// after the sampler it stopped has returned); after Close, drained
	// closes when it reaches 0.
	live    int
	drained chan struct{}

	// sampleMu serialises samples: the sampler's and the on-demand ones
	// of api/snapshot and of a stream's first event. It is taken before mu
	// (a sample lists the sources under mu), never while mu is held.
	sampleMu sync.Mutex
	tracks   map[string]*track
	latest   *frame

	fleet fleetCache // Options.FleetView's answers
}

// source is a Group or a standalone executor added to the handler.
type source struct {
	g  *executor.Group
	ex *executor.Executor
}

// New validates opts and returns a handler with nothing to show; add
// groups and executors with AddGroup and Add. Nothing runs until the first
// stream opens.
func New(opts Options) (*Handler, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	sub, err := fs.Sub(static, "static")
	if err != nil {
		return nil, err // the embedded directory is part of the build
	}
	return &Handler{
		opts:    opts,
		files:   http.FileServerFS(sub),
		streams: map[*stream]struct{}{},
		perAddr: map[string]int{},
		quit:    make(chan struct{}),
		drained: make(chan struct{}),
		tracks:  map[string]*track{},
		fleet:   fleetCache{entries: map[string]*fleetEntry{}},
	}, nil
}

// errUnmade answers every use of a Handler that New did not make: the zero
// value has no options to follow and no channels to end its streams with.
var errUnmade = errors.New("dashboard: a zero Handler (make it with dashboard.New)")

// made reports whether New made h.
func (h *Handler) made() bool { return h != nil && h.quit != nil }

// logger returns Options.Logger, or slog.Default() for a Handler that New
// did not make.
func (h *Handler) logger() *slog.Logger {
	if h.opts.Logger == nil {
		return slog.Default()
	}
	return h.opts.Logger
}

// refuse reports an argument that Add or AddGroup does not add. They
// return nothing, so Options.Logger is where the mistake shows; adding it
// would crash the sampler's goroutine, and the process, at its next tick.
func (h *Handler) refuse(method, what string) {
	h.logger().LogAttrs(context.Background(), slog.LevelError,
		"fusebox dashboard: "+method+" refused "+what+": nothing is shown for it")
}

// AddGroup shows every executor of g, including those it creates later,
// until they are evicted or g is closed. A nil g is refused, reported to
// Options.Logger.
func (h *Handler) AddGroup(g *executor.Group) {
	if g == nil {
		h.refuse("AddGroup", "a nil *executor.Group")
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sources = append(h.sources, source{g: g})
}

// Add shows a standalone executor (one made by executor.New) until Remove.
// A nil executor, or a zero one that executor.New did not make, is
// refused, reported to Options.Logger.
func (h *Handler) Add(ex *executor.Executor) {
	switch {
	case ex == nil:
		h.refuse("Add", "a nil *executor.Executor")
		return
	case ex.Breaker() == nil: // every executor New makes has a breaker
		h.refuse("Add", "a zero executor.Executor (make it with executor.New)")
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sources = append(h.sources, source{ex: ex})
}

// Remove stops showing ex, added with Add. It does nothing if ex was not
// added, nil included.
func (h *Handler) Remove(ex *executor.Executor) {
	if ex == nil {
		return // a group's source has a nil ex too: it is no match
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, s := range h.sources {
		if s.ex == ex {
			h.sources = append(h.sources[:i:i], h.sources[i+1:]...)
			return
		}
	}
}

// each calls f for every executor shown, with its ID: its name, or its
// name and "#2", "#3", ... when an earlier executor has that ID already
// (an executor of the same name in an earlier source, or one whose own
// name is the suffixed one). Sources are visited in the order they were
// added.
func (h *Handler) each(f func(id string, ex *executor.Executor)) {
	h.mu.Lock()
	sources := h.sources // appended to and re-sliced only, never written in place
	h.mu.Unlock()
	used := map[string]bool{}
	visit := func(ex *executor.Executor) {
		id := ex.Name()
		for k := 2; used[id]; k++ {
			id = ex.Name() + "#" + strconv.Itoa(k)
		}
		used[id] = true
		f(id, ex)
	}
	for _, s := range sources {
		if s.ex != nil {
			visit(s.ex)
			continue
		}
		for _, name := range s.g.Names() {
			if ex, ok := s.g.Lookup(name); ok {
				visit(ex)
			}
		}
	}
}

// find returns the executor shown under id.
func (h *Handler) find(id string) *executor.Executor {
	var found *executor.Executor
	h.each(func(i string, ex *executor.Executor) {
		if i == id && found == nil {
			found = ex
		}
	})
	return found
}

// frameFor returns the newest frame, sampling first if it is older than an
// interval and no sampler keeps it fresh. However many requests come, the
// stats are read and encoded at most about once per interval.
func (h *Handler) frameFor(now time.Time) *frame {
	h.sampleMu.Lock()
	defer h.sampleMu.Unlock()
	if h.latest != nil && now.Sub(h.latest.at) < h.opts.Interval {
		return h.latest
	}
	return h.sampleLocked(now)
}

// Snapshot returns the current snapshot, as GET api/snapshot does. It
// shares its slices and maps with the handler's cache: treat it as
// read-only. A zero Handler, which New did not make, has nothing to show:
// its Snapshot is empty, and the mistake is logged to slog.Default().
func (h *Handler) Snapshot() Snapshot {
	if !h.made() {
		slog.Default().LogAttrs(context.Background(), slog.LevelError, "fusebox "+errUnmade.Error())
		return Snapshot{}
	}
	return h.frameFor(time.Now()).snap
}

// ServeHTTP routes a request; see Handler. A zero Handler, which New did
// not make, answers every request with 500 Internal Server Error naming
// New.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.made() {
		http.Error(w, errUnmade.Error(), http.StatusInternalServerError)
		return
	}
	if len(h.opts.AllowedHosts) > 0 && !knownHost(r.Host, h.opts.AllowedHosts) {
		http.Error(w, "dashboard: the Host must name the dashboard by address, as localhost, or as one of Options.AllowedHosts, got "+quote(r.Host), http.StatusMisdirectedRequest)
		return
	}
	switch r.URL.Path {
	case "/api/control":
		h.serveControl(w, r)
		return
	case "/api/snapshot":
		if onlyGet(w, r) {
			setAPIHeaders(w)
			w.Header().Set("Content-Type", "application/json")
			w.Write(h.frameFor(time.Now()).full)
		}
		return
	case "/api/fleet":
		if onlyGet(w, r) {
			h.serveFleet(w, r)
		}
		return
	case "/api/events":
		if onlyGet(w, r) {
			h.serveEvents(w, r)
		}
		return
	}
	if !onlyGet(w, r) {
		return
	}
	if r.URL.Path == "" {
		r.URL.Path = "/" // mounted with StripPrefix("/x") and asked for "/x"
	}
	hd := w.Header()
	// The page loads only its own script and style and talks only to its
	// own origin; no other site may frame it (its buttons would be a
	// clickjacking target).
	hd.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; "+
		"img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cache-Control", "no-cache")
	h.files.ServeHTTP(w, r)
}

// onlyGet answers 405 to anything but GET and HEAD, and reports whether r
// may go on. Nothing a GET reaches changes any state.
func onlyGet(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	w.Header().Set("Allow", "GET, HEAD")
	http.Error(w, "dashboard: method "+r.Method+" not allowed here", http.StatusMethodNotAllowed)
	return false
}

func setAPIHeaders(w http.ResponseWriter) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
}
