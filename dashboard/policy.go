package dashboard

import "github.com/fusebox-go/fusebox/policy"

// Policy is what the retry and hedging policies added with AddPolicies did
// for one supplier, since they were made.
type Policy struct {
	Retries        uint64 `json:"retries"`         // attempts after a first one
	RetriesRefused uint64 `json:"retries_refused"` // retries the budget refused
	Hedges         uint64 `json:"hedges"`          // second attempts started
	HedgesWon      uint64 `json:"hedges_won"`      // hedges that answered first
	HedgesRefused  uint64 `json:"hedges_refused"`  // hedges the budget refused
}

// policies is a Retrier and a Hedger added to the handler; either may be
// nil.
type policies struct {
	r *policy.Retrier
	h *policy.Hedger
}

// AddPolicies shows on each supplier's tile the retries and hedges that r
// and hg (either may be nil) made for it, and what their budgets refused.
// Suppliers are matched by name (Executor.Name).
func (h *Handler) AddPolicies(r *policy.Retrier, hg *policy.Hedger) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.policies = append(h.policies, policies{r, hg})
}

// policyTotals returns the counts of every policy added, by supplier name;
// nil if none was added.
func (h *Handler) policyTotals() map[string]*Policy {
	h.mu.Lock()
	ps := h.policies // appended to only, never written in place
	h.mu.Unlock()
	if len(ps) == 0 {
		return nil
	}
	out := map[string]*Policy{}
	of := func(name string) *Policy {
		p := out[name]
		if p == nil {
			p = &Policy{}
			out[name] = p
		}
		return p
	}
	for _, p := range ps {
		if p.r != nil {
			for _, s := range p.r.Stats() {
				t := of(s.Supplier)
				t.Retries += s.Retries
				t.RetriesRefused += s.BudgetRefused
			}
		}
		if p.h != nil {
			for _, s := range p.h.Stats() {
				t := of(s.Supplier)
				t.Hedges += s.Hedges
				t.HedgesWon += s.Won
				t.HedgesRefused += s.BudgetRefused
			}
		}
	}
	return out
}
