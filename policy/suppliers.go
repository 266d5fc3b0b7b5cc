package policy

import (
	"slices"
	"strings"
	"sync"
)

// suppliers holds a policy's state per supplier, made on a supplier's
// first call and kept for the policy's life (a few hundred bytes each).
// Suppliers are named as their executors are (Executor.Name), so the
// state of a supplier survives a Group evicting and re-creating its
// executor.
type suppliers[S any] struct {
	m    sync.Map // string → *S
	make func(name string) *S
}

// get returns name's state, making it on first use.
func (ss *suppliers[S]) get(name string) *S {
	if s, ok := ss.m.Load(name); ok {
		return s.(*S)
	}
	s, _ := ss.m.LoadOrStore(name, ss.make(name))
	return s.(*S)
}

// each calls fn for every supplier, by name.
func (ss *suppliers[S]) each(fn func(name string, s *S)) {
	var names []string
	ss.m.Range(func(k, _ any) bool {
		names = append(names, k.(string))
		return true
	})
	slices.SortFunc(names, strings.Compare)
	for _, n := range names {
		s, _ := ss.m.Load(n)
		fn(n, s.(*S))
	}
}
