package fleet

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
)

// One view of the fleet. Each replica writes its breaker's state for a
// supplier to Redis when it changes (on the lease scheduler's goroutine,
// never on a call's path): a key per replica and supplier that expires
// after viewTTL, so that a replica that is gone, or has not changed state
// for that long, drops out of the view. View reads them back with the
// probe lease and the fleet's open key, and ViewHandler serves that as JSON
// on the admin listener that serves the dashboard.

// viewTTL is how long a replica's reported state stays in the view.
const viewTTL = time.Hour

// MaxViewReplicas bounds the replicas a View shows, so that its JSON fits
// the dashboard's 64 KiB bound on a fleet view; it counts the others.
const MaxViewReplicas = 200

// ReplicaState is one replica's breaker for a supplier, as it last
// reported it.
type ReplicaState struct {
	Replica string        `json:"replica"`
	State   string        `json:"state"`
	Reason  string        `json:"reason"`
	For     time.Duration `json:"for_ns"`      // how long it has been in the state, as of the reading
	ProbeIn time.Duration `json:"probe_in_ns"` // while open: until its probe was due, as of the reading (0 if past)
}

// View is the fleet's picture of one supplier.
type View struct {
	Supplier string         `json:"supplier"`
	Replicas []ReplicaState `json:"replicas"` // by replica name
	// Prober holds the probe lease (it probes next, or is probing); ""
	// when nobody does. ProberLeft is what its lease has left.
	Prober     string        `json:"prober"`
	ProberLeft time.Duration `json:"prober_left_ns"`
	// Override is the newest fleet-wide operator action this replica
	// knows for the supplier, if any.
	Override *Override `json:"override,omitempty"`
	// Omitted counts the reporters left out: beyond MaxViewReplicas, or
	// with a name or state no replica writes (the keys are not signed).
	Omitted int `json:"omitted,omitempty"`
}

// stateNames are the states a replica reports.
var stateNames = func() map[string]bool {
	m := map[string]bool{}
	for _, s := range []breaker.State{breaker.Closed, breaker.Open, breaker.HalfOpen, breaker.ForcedOpen, breaker.Disabled} {
		m[s.String()] = true
	}
	return m
}()

// stateEntry is what a replica writes for the view.
type stateEntry struct {
	State   string `json:"state"`
	Reason  string `json:"reason"`
	Age     int64  `json:"age_ns"`
	ProbeIn int64  `json:"probe_in_ns,omitempty"`
	TTL     int64  `json:"ttl_ns"`
}

// View reads the fleet's picture of supplier from Redis: at most
// MaxViewReplicas replicas, the others counted in Omitted.
func (l *Link) View(ctx context.Context, supplier string) (View, error) {
	if err := l.usable(ctx, "View"); err != nil {
		return View{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, l.cfg.OpTimeout)
	defer cancel()
	v := View{Supplier: supplier, Replicas: []ReplicaState{}}
	states, omitted, prober, left, err := l.be.view(ctx, supplier)
	if err != nil {
		return v, err
	}
	v.Prober, v.ProberLeft, v.Omitted = prober, left, omitted
	for replica, s := range states {
		var e stateEntry
		if len(s.payload) > maxMessageBytes || json.Unmarshal(s.payload, &e) != nil || e.TTL <= 0 ||
			!stateNames[e.State] || !validReason(e.Reason) {
			v.Omitted++
			continue
		}
		age := time.Duration(e.Age) + time.Duration(e.TTL) - s.left
		v.Replicas = append(v.Replicas, ReplicaState{Replica: replica, State: e.State, Reason: e.Reason, For: age,
			ProbeIn: max(time.Duration(e.ProbeIn)-(time.Duration(e.TTL)-s.left), 0)})
	}
	slices.SortFunc(v.Replicas, func(a, b ReplicaState) int {
		if a.Replica < b.Replica {
			return -1
		}
		return 1
	})
	if o, ok := l.Overrides()[supplier]; ok {
		v.Override = &o
	}
	return v, nil
}

// FleetView is View for the dashboard's tiles (dashboard.Options.FleetView):
// dashboard.New(dashboard.Options{FleetView: link.FleetView}) shows every
// replica's state of a supplier, who probes next and the fleet-wide
// override in the tile's fleet section, on the dashboard's own listener.
func (l *Link) FleetView(ctx context.Context, supplier string) (any, error) {
	v, err := l.View(ctx, supplier)
	if err != nil {
		return nil, err
	}
	return v, nil
}

// ViewHandler serves GET ?supplier=<name> as the JSON of Link.View, for
// the admin listener that serves the dashboard (mount it beside it, e.g.
// at /fusebox/fleet). A request without a supplier is answered with the
// names of this replica's suppliers. For a nil or zero Link, which New did
// not make, it answers every request with 500 Internal Server Error naming
// fleet.New.
func ViewHandler(l *Link) http.Handler {
	if !l.made() {
		msg := unmade("ViewHandler").Error()
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, msg, http.StatusInternalServerError)
		})
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", "GET")
			http.Error(w, "fleet: the view takes GET only", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		name := r.URL.Query().Get("supplier")
		if name == "" {
			_ = json.NewEncoder(w).Encode(map[string][]string{"suppliers": l.g.Names()})
			return
		}
		v, err := l.View(r.Context(), name)
		if err != nil {
			http.Error(w, "fleet: view: "+err.Error(), http.StatusBadGateway)
			return
		}
		_ = json.NewEncoder(w).Encode(v)
	})
}

// report writes this replica's state of a supplier for the view, if it
// changed since it last did; written holds what it wrote, per supplier.
func (l *Link) report(written map[string]uint64, name string, s breaker.Stats) {
	if !l.isUp() {
		return
	}
	if g, ok := written[name]; ok && g == s.Generation {
		return
	}
	if s.Generation == 0 {
		return // never changed state: nothing to show
	}
	now := time.Now()
	e := stateEntry{State: s.State.String(), Reason: s.Reason.String(), Age: int64(max(now.Sub(s.Since), 0)), TTL: int64(viewTTL)}
	if s.State == breaker.Open {
		e.ProbeIn = int64(max(s.OpenUntil.Sub(now), 0))
	}
	b, _ := json.Marshal(e)
	ctx, cancel := context.WithTimeout(context.Background(), l.cfg.OpTimeout)
	defer cancel()
	// Best effort: a report that fails is not tried again before the
	// breaker's next transition or the next session, so that an
	// unreachable shard does not hold up the scheduler on every review.
	_ = l.be.report(ctx, name, l.cfg.Replica, b, viewTTL)
	written[name] = s.Generation
}
