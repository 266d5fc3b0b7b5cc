package fusebox_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/fusebox-go/fusebox/"

// allowed lists, per package of the library module, the non-standard
// imports its (non-test) code may have. Leaves stay leaves: breaker and
// bulkhead use the standard library only (bulkhead and future share
// internal/ilist, std only itself), and only the executor combines them,
// through their exported API. A package missing here fails the test, so a
// new package has to state its place in the layering.
var allowed = map[string][]string{
	"breaker":        nil,
	"future":         {module + "internal/ilist"},
	"internal/ilist": nil,
	"bulkhead":       {module + "internal/ilist"},
	"executor": {module + "breaker", module + "bulkhead", module + "future", module + "priority", module + "throttle",
		module + "internal/adaptive", module + "internal/callctx", module + "internal/latency", module + "internal/listeners", module + "internal/stuck",
		module + "internal/timeline", module + "internal/validate", "golang.org/x/sync/"},
	// The executor's mechanisms, each std only and tested on its own: the
	// adaptive limit's algorithm, the latency history, the deadline timeline.
	"internal/adaptive": nil,
	"internal/latency":  nil,
	"internal/timeline": nil,
	// The context a call's function receives; its deadline is a timeline entry.
	"internal/callctx": {module + "internal/timeline"},
	// The stuck criterion: its rule and the latency history it learns from.
	"internal/stuck": {module + "internal/latency"},
	// A list of listeners read without a lock (a Group's subscribers).
	"internal/listeners": nil,
	// The checks of the executor's Config fields, each bad field by name.
	"internal/validate": nil,
	"priority":          nil,
	// Client-side adaptive throttling, a leaf the executor calls.
	"throttle": {module + "priority"},
	"fusehttp": {module + "executor", module + "breaker", module + "future", module + "priority"},
	// A service's own routes behind per-route bulkheads.
	"fusehttp/inbound": {module + "executor", module + "breaker", module + "priority"},
	"dashboard":        {module + "executor", module + "breaker", module + "policy", module + "priority", module + "shed"},
	"config":           {module + "executor"},
	// The test kit for users: a fake supplier and a recorder of events.
	"fuseboxtest": {module + "breaker"},
	// Readiness reports from the breakers of a Group's executors.
	"readiness": {module + "executor", module + "breaker"},

	// Retries with a budget and hedged calls, around any executor.
	"policy": {module + "executor", module + "breaker", module + "future"},
	// Ports for the servers the nested modules' tests start, std only.
	"internal/testport": nil,
	// A throwaway PostgreSQL server for the tests and demos of fusesql and
	// fusepgx (nested modules), std only but for its port.
	"internal/pgserver": {module + "internal/testport"},
	// A command for make bench-call: reads benchmark output, std only.
	"tools/benchratio": nil,
	// A command for make bench-instr: runs Valgrind, reads its counts, std only.
	"tools/instrcount": nil,
	// A program that imports every package (see TestImportStartsNoGoroutine).
	"tools/importcheck": {strings.TrimSuffix(module, "/"), module},

	// The inbound load shedder for a whole process or listener.
	"shed": {module + "priority", module + "breaker"},
}

// importers states, for the packages whose users are few by design, who
// may import them (their own tests aside): the bulkhead is the executor's
// slot layer, and each internal package serves the packages listed. A
// package of the allowed map that may import one of these must be listed
// here too, so the two maps cannot drift apart. breaker is public API:
// any package may import it.
var importers = map[string][]string{
	"bulkhead":           {"executor"},
	"internal/adaptive":  {"executor"},
	"internal/callctx":   {"executor"},
	"internal/ilist":     {"bulkhead", "future"},
	"internal/latency":   {"executor", "internal/stuck"},
	"internal/listeners": {"executor"},
	"internal/pgserver":  {}, // the nested modules' tests and demos only
	"internal/stuck":     {"executor"},
	"internal/testport":  {"internal/pgserver"},
	"internal/timeline":  {"executor", "internal/callctx"},
	"internal/validate":  {"executor"},
}

func TestWhoMayImport(t *testing.T) {
	for pkg, allow := range allowed {
		for _, imp := range allow {
			dep := strings.TrimPrefix(imp, module)
			if dep == imp {
				continue // outside the module
			}
			who, ok := importers[dep]
			if !ok {
				if strings.HasPrefix(dep, "internal/") || dep == "bulkhead" {
					t.Errorf("%s has no entry in importers", dep)
				}
				continue
			}
			if !slices.Contains(who, pkg) {
				t.Errorf("allowed lets %s import %s, which importers reserves for %v", pkg, dep, who)
			}
		}
	}
	for dep := range importers {
		if _, ok := allowed[dep]; !ok {
			t.Errorf("importers names %s, which has no entry in the layering rules", dep)
		}
	}
}

func TestLayering(t *testing.T) {
	seen := 0
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." {
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // a nested module has its own go.mod and rules
			}
			if strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "out" {
				return filepath.SkipDir
			}
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		if dir == "." || strings.HasPrefix(dir, "examples/") {
			return nil // the root holds only documentation; examples are programs
		}
		allow, ok := allowed[dir]
		if !ok {
			t.Errorf("%s: package %q has no entry in the layering rules", path, dir)
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		seen++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !strings.Contains(strings.Split(p, "/")[0], ".") {
				continue // standard library
			}
			if !permitted(p, allow) {
				t.Errorf("%s imports %s; %s may import only the standard library%s", path, p, dir, list(allow))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen == 0 {
		t.Fatal("no package files found: the walk is broken")
	}
}

func permitted(p string, allow []string) bool {
	for _, a := range allow {
		if p == a || (strings.HasSuffix(a, "/") && strings.HasPrefix(p, a)) || strings.HasPrefix(p, a+"/") {
			return true
		}
	}
	return false
}

func list(allow []string) string {
	if len(allow) == 0 {
		return ""
	}
	return " and " + strings.Join(allow, ", ")
}
