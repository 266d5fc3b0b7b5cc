package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// The fleet's view of a supplier (Options.FleetView), fetched for the
// page only when a tile's fleet section is open, and at most once per
// supplier every fleetEvery however many pages ask: each answer, or
// error, is kept that long and served to every request meanwhile.
const (
	fleetEvery   = 2 * time.Second
	fleetTimeout = 2 * time.Second // bounds one call of Options.FleetView
	maxFleetBody = 64 << 10        // a larger answer is refused
)

// fleetCache holds the newest answer per supplier.
type fleetCache struct {
	mu      sync.Mutex
	entries map[string]*fleetEntry
}

// fleetEntry is one supplier's newest answer; mu serialises its fetches,
// so that one supplier is asked about once at a time.
type fleetEntry struct {
	mu   sync.Mutex
	at   time.Time
	body []byte
	err  error
}

// serveFleet answers GET api/fleet?supplier=<ID>.
func (h *Handler) serveFleet(w http.ResponseWriter, r *http.Request) {
	setAPIHeaders(w)
	if h.opts.FleetView == nil {
		http.Error(w, "dashboard: no fleet view (Options.FleetView)", http.StatusNotFound)
		return
	}
	id := r.URL.Query().Get("supplier")
	ex := h.find(id)
	if ex == nil {
		http.Error(w, "dashboard: fleet view: no supplier "+quote(id), http.StatusNotFound)
		return
	}
	body, err := h.fleetView(r.Context(), id, ex.Name())
	if err != nil {
		http.Error(w, "dashboard: fleet view: "+err.Error(), http.StatusBadGateway)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
}

// fleetView returns the supplier's answer, asking Options.FleetView if the
// one kept is older than fleetEvery.
func (h *Handler) fleetView(ctx context.Context, id, name string) ([]byte, error) {
	c := &h.fleet
	c.mu.Lock()
	e := c.entries[id]
	if e == nil {
		if len(c.entries) >= 2*h.opts.MaxSuppliers {
			clear(c.entries) // suppliers come and go: forget them all now and then
		}
		e = &fleetEntry{}
		c.entries[id] = e
	}
	c.mu.Unlock()

	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.at.IsZero() && time.Since(e.at) < fleetEvery {
		return e.body, e.err
	}
	e.body, e.err = callFleetView(context.WithoutCancel(ctx), h.opts.FleetView, name)
	e.at = time.Now()
	return e.body, e.err
}

// callFleetView calls f (see callHook) and encodes its answer, on the
// hook's goroutine too: the answer is the user's, and its MarshalJSON may
// panic, end its goroutine or block as the hook itself may.
func callFleetView(ctx context.Context, f func(context.Context, string) (any, error), name string) ([]byte, error) {
	var out []byte // written by the hook's goroutine; read only once it has returned
	err := callHook(ctx, fleetTimeout, "Options.FleetView", func(ctx context.Context) error {
		v, err := f(ctx, name)
		if err != nil {
			return err
		}
		body, err := json.Marshal(v)
		switch {
		case err != nil:
			return fmt.Errorf("Options.FleetView's answer: %w", err)
		case len(body) > maxFleetBody:
			return errors.New("Options.FleetView's answer is over 64 KiB")
		}
		out = body
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
