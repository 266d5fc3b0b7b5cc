package readiness

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
)

// State is the readiness of a supplier or of the whole service.
type State string

// The states, from best to worst.
const (
	// Ready: the breaker is closed (or disabled); calls go through.
	Ready State = "ready"
	// Degraded: a supplier is recovering (half-open, or open with its
	// probe due), or a non-critical one is refused; the service answers.
	Degraded State = "degraded"
	// Unready: a supplier's breaker is open (its probe not due yet) or
	// forced open; for the service, a critical supplier's is.
	Unready State = "unready"
)

// Config says whose breakers count and which of them are critical.
type Config struct {
	// Group's executors are reported, all it holds at each report (those
	// created later included). nil means none; Group or Executors is
	// required.
	Group *executor.Group
	// Executors are standalone executors to report as well. Their names
	// must differ from each other and from the group's.
	Executors []*executor.Executor
	// Critical names the suppliers whose unready breaker makes the service
	// unready. A supplier not listed (or listed false) is not critical, so
	// its open breaker makes the service degraded at worst. Every name must be
	// one the Group holds (list it in GroupConfig.Suppliers, so that it
	// is there from the start) or an Executor's. New copies the map: a
	// change made to it later neither bypasses that check nor races with
	// the reports.
	Critical map[string]bool
	// Details puts the suppliers' lines (name, state, breaker, reason,
	// since) in the handler's body. false: the body is only the service's
	// state, {"state":"ready"} and the like, which is what a probe that
	// clients or other tenants can reach should answer; set it only on a
	// Checker mounted on an admin listener. Report has the details either
	// way.
	Details bool
	// MaxSuppliers caps the supplier lines of a detailed body, the least
	// ready kept first; the body's "omitted" counts the others. 0: 100.
	MaxSuppliers int
}

// defaultMaxSuppliers is MaxSuppliers' zero value: about 20 KiB of JSON.
const defaultMaxSuppliers = 100

// Checker reports readiness; it is an http.Handler. It keeps no state of
// its own: every report reads the breakers as they are. It is safe for
// concurrent use. A nil or zero Checker checks no supplier and so reports
// ready: a readiness probe that failed on a checker New refused would take
// every replica out of service at once, the outage this package exists to
// prevent; New's error is where a bad Config shows.
type Checker struct {
	cfg Config
}

// New returns a Checker for cfg, or an error that names the field at fault.
func New(cfg Config) (*Checker, error) {
	var errs []error
	if cfg.Group == nil && len(cfg.Executors) == 0 {
		errs = append(errs, errors.New("readiness: Config needs a Group or Executors"))
	}
	names := map[string]bool{}
	if cfg.Group != nil {
		for _, n := range cfg.Group.Names() {
			names[n] = true
		}
	}
	for i, ex := range cfg.Executors {
		switch {
		case ex == nil:
			errs = append(errs, fmt.Errorf("readiness: Executors[%d] is nil", i))
		case ex.Name() == "": // every executor New makes has a name
			errs = append(errs, fmt.Errorf("readiness: Executors[%d] is a zero Executor (make it with executor.New or Group.Executor)", i))
		case names[ex.Name()]:
			errs = append(errs, fmt.Errorf("readiness: Executors[%d] is named %q, as another executor is", i, ex.Name()))
		default:
			names[ex.Name()] = true
		}
	}
	for _, n := range slices.Sorted(maps.Keys(cfg.Critical)) {
		if !names[n] {
			errs = append(errs, fmt.Errorf("readiness: Critical names %q, which neither the Group (list it in its Suppliers) nor Executors holds", n))
		}
	}
	if cfg.MaxSuppliers < 0 {
		errs = append(errs, fmt.Errorf("readiness: Config.MaxSuppliers must not be negative (0: %d), got %d", defaultMaxSuppliers, cfg.MaxSuppliers))
	}
	if errs != nil {
		return nil, errors.Join(errs...)
	}
	if cfg.MaxSuppliers == 0 {
		cfg.MaxSuppliers = defaultMaxSuppliers
	}
	cfg.Executors = slices.Clone(cfg.Executors)
	cfg.Critical = maps.Clone(cfg.Critical)
	return &Checker{cfg: cfg}, nil
}

// Report is the readiness of the service and of each supplier.
type Report struct {
	State     State            `json:"state"`
	Suppliers []SupplierReport `json:"suppliers"` // sorted by name
	// Omitted counts the suppliers a detailed body left out
	// (Config.MaxSuppliers); Report leaves none out.
	Omitted int `json:"omitted,omitempty"`
}

// SupplierReport is one supplier's line in a Report.
type SupplierReport struct {
	Name     string `json:"name"`
	State    State  `json:"state"`
	Critical bool   `json:"critical"`
	// Breaker is the breaker's state ("closed", "open", "half-open",
	// "forced-open", "disabled"), Reason why it entered it (as
	// breaker.Reason names it), Since when.
	Breaker string    `json:"breaker"`
	Reason  string    `json:"reason"`
	Since   time.Time `json:"since"`
}

// Report reads every supplier's breaker now and applies the rule (see the
// package documentation). Use it in a handler of your own, or to log.
func (c *Checker) Report() Report {
	var cfg Config // a nil Checker checks nothing, as a zero one
	if c != nil {
		cfg = c.cfg
	}
	var exs []*executor.Executor
	if g := cfg.Group; g != nil {
		for _, n := range g.Names() {
			if ex, ok := g.Lookup(n); ok { // one evicted meanwhile is gone
				exs = append(exs, ex)
			}
		}
	}
	exs = append(exs, cfg.Executors...)
	r := Report{State: Ready, Suppliers: make([]SupplierReport, 0, len(exs))}
	now := time.Now()
	for _, ex := range exs {
		s := ex.Breaker().Stats()
		sr := SupplierReport{
			Name:     ex.Name(),
			State:    supplierState(ex, s, now),
			Critical: cfg.Critical[ex.Name()],
			Breaker:  s.State.String(),
			Reason:   s.Reason.String(),
			Since:    s.Since,
		}
		r.Suppliers = append(r.Suppliers, sr)
		switch {
		case sr.State == Unready && sr.Critical:
			r.State = Unready
		case sr.State != Ready && r.State == Ready:
			r.State = Degraded
		}
	}
	slices.SortFunc(r.Suppliers, func(a, b SupplierReport) int { return strings.Compare(a.Name, b.Name) })
	return r
}

// supplierState is the rule for one supplier. An Open breaker half-opens
// only when a call comes after its open period: once its probe is due it
// is recovering, degraded, since an instance that a critical supplier made
// unready gets no call to probe with. In shadow mode nothing is refused:
// ready whatever the breaker says (Stats is read only then).
func supplierState(ex *executor.Executor, s breaker.Stats, now time.Time) State {
	switch {
	case s.State == breaker.Closed || s.State == breaker.Disabled:
		return Ready
	case ex.Stats().Shadow:
		return Ready
	}
	switch s.State {
	case breaker.HalfOpen:
		return Degraded
	case breaker.Open:
		if !s.OpenUntil.IsZero() && !now.Before(s.OpenUntil) {
			return Degraded
		}
	}
	return Unready // Open, ForcedOpen
}

// The bodies of a status-only answer: the same for every caller.
var stateBodies = map[State][]byte{
	Ready:    []byte(`{"state":"ready"}` + "\n"),
	Degraded: []byte(`{"state":"degraded"}` + "\n"),
	Unready:  []byte(`{"state":"unready"}` + "\n"),
}

// ServeHTTP answers with status 503 when the service is unready, 200
// otherwise (ready or degraded). The JSON body is the service's state
// alone, or with Config.Details the Report, at most Config.MaxSuppliers
// supplier lines of it.
func (c *Checker) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	r := c.Report()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if r.State == Unready {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	if c == nil || !c.cfg.Details {
		_, _ = w.Write(stateBodies[r.State]) // a client that left cannot be answered
		return
	}
	r.Suppliers, r.Omitted = keepWorst(r.Suppliers, c.cfg.MaxSuppliers)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(r)
}

// keepWorst returns at most n of ss (sorted by name), the least ready
// first kept, still sorted by name, and how many it left out.
func keepWorst(ss []SupplierReport, n int) ([]SupplierReport, int) {
	if len(ss) <= n {
		return ss, 0
	}
	rank := func(s SupplierReport) int {
		switch {
		case s.State == Unready && s.Critical:
			return 0
		case s.State == Unready:
			return 1
		case s.State == Degraded:
			return 2
		}
		return 3
	}
	slices.SortStableFunc(ss, func(a, b SupplierReport) int { return rank(a) - rank(b) })
	kept := ss[:n]
	slices.SortFunc(kept, func(a, b SupplierReport) int { return strings.Compare(a.Name, b.Name) })
	return kept, len(ss) - n
}
