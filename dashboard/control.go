package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"github.com/fusebox-go/fusebox/breaker"
)

// ControlHeader must be present on every control request. A browser sends
// a custom header to another origin only after a CORS preflight, which
// this handler never approves, and an HTML form cannot set one: so a page
// of another site cannot make an operator's browser trip a breaker.
const ControlHeader = "X-Fusebox-Control"

// ControlRequest is the JSON body of POST api/control.
type ControlRequest struct {
	Supplier string `json:"supplier"` // Supplier.ID
	Action   string `json:"action"`   // "trip", "force-open" or "reset"
	Reason   string `json:"reason"`   // optional: the operator's, for Options.Control
}

// actions are the operator actions, by name.
var actions = map[string]func(*breaker.Breaker){
	// Trip opens the breaker for one reset timeout; probes follow as usual.
	"trip": func(b *breaker.Breaker) { b.Trip(breaker.Manual) },
	// ForceOpen refuses every call until a reset.
	"force-open": (*breaker.Breaker).ForceOpen,
	// Reset closes the breaker, ending a forced open too.
	"reset": (*breaker.Breaker).Reset,
}

// maxControlBody bounds the body of a control request.
const maxControlBody = 4 << 10

// serveControl carries out one operator action. Every refusal names its
// cause; nothing changes unless every check passed.
func (h *Handler) serveControl(w http.ResponseWriter, r *http.Request) {
	setAPIHeaders(w)
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "dashboard: api/control takes POST only", http.StatusMethodNotAllowed)
		return
	}
	if !h.opts.AllowControl {
		http.Error(w, "dashboard: operator actions are off (Options.AllowControl)", http.StatusForbidden)
		return
	}
	if r.Header.Get(ControlHeader) == "" {
		http.Error(w, "dashboard: a control request must carry the "+ControlHeader+" header", http.StatusForbidden)
		return
	}
	if !knownHost(r.Host, h.opts.ControlHosts) && !knownHost(r.Host, h.opts.AllowedHosts) {
		http.Error(w, "dashboard: a control request must name the dashboard's host by address, as localhost, or as one of Options.ControlHosts or AllowedHosts, got "+quote(r.Host), http.StatusForbidden)
		return
	}
	if !sameOrigin(r) {
		http.Error(w, "dashboard: a control request must come from the dashboard's own origin", http.StatusForbidden)
		return
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		http.Error(w, "dashboard: a control request must have Content-Type application/json", http.StatusUnsupportedMediaType)
		return
	}
	var req ControlRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxControlBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		http.Error(w, "dashboard: control request body: "+err.Error(), http.StatusBadRequest)
		return
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		http.Error(w, "dashboard: control request body: one JSON object expected", http.StatusBadRequest)
		return
	}
	act, ok := actions[req.Action]
	if !ok {
		http.Error(w, "dashboard: control request: action must be trip, force-open or reset, got "+quote(req.Action), http.StatusBadRequest)
		return
	}
	ex := h.find(req.Supplier)
	if ex == nil {
		http.Error(w, "dashboard: control request: no supplier "+quote(req.Supplier), http.StatusNotFound)
		return
	}
	if h.opts.Control != nil {
		err := callHook(r.Context(), controlTimeout, "Options.Control", func(ctx context.Context) error {
			return h.opts.Control(ctx, ex.Name(), req.Action, req.Reason)
		})
		if err != nil {
			http.Error(w, "dashboard: control: "+err.Error(), http.StatusBadGateway)
			return
		}
	} else {
		act(ex.Breaker())
	}
	st := ex.Breaker().State()
	h.opts.Logger.LogAttrs(context.Background(), slog.LevelWarn, "fusebox dashboard: operator action",
		slog.String("supplier", req.Supplier), slog.String("action", req.Action),
		slog.String("state", st.String()), slog.String("remote", r.RemoteAddr))
	w.Header().Set("Content-Type", "application/json")
	w.Write(mustJSON(map[string]string{"supplier": req.Supplier, "action": req.Action, "state": st.String()}))
}

// knownHost reports whether host, a request's Host header, names the
// dashboard by address, as localhost, or as one of names.
func knownHost(host string, names []string) bool {
	name := host
	if n, _, err := net.SplitHostPort(host); err == nil {
		name = n
	}
	name = strings.TrimSuffix(strings.TrimPrefix(name, "["), "]")
	if _, err := netip.ParseAddr(name); err == nil || strings.EqualFold(name, "localhost") {
		return true
	}
	for _, c := range names {
		if strings.EqualFold(name, c) {
			return true
		}
	}
	return false
}

// sameOrigin reports whether r comes from the page's own origin, as far as
// the browser says: an Origin header, when present, must name r's host;
// Sec-Fetch-Site, when present, must be same-origin. Clients that are not
// browsers send neither and pass (ControlHeader still applies).
func sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		return false
	}
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && u.Host == r.Host
}

func quote(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	b, _ := json.Marshal(s)
	return string(b)
}
