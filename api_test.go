package fusebox_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// coreAPIBudget is the most exported identifiers the core packages may
// have together. New capability goes into packages of its own, so this
// number holds while the library grows around the core.
const coreAPIBudget = 140

// corePackages are the packages a user of the library meets first.
var corePackages = []string{"breaker", "bulkhead", "future", "executor", "fusehttp"}

// TestCoreAPIStaysWithinBudget counts what pkg.go.dev would list for the
// core packages: exported package-level names (functions, types,
// constants, variables) and exported methods of exported types. Struct
// fields are not counted.
func TestCoreAPIStaysWithinBudget(t *testing.T) {
	total := 0
	for _, pkg := range corePackages {
		n := exportedIdentifiers(t, pkg)
		t.Logf("%s: %d", pkg, n)
		total += n
	}
	t.Logf("core API: %d identifiers (budget %d)", total, coreAPIBudget)
	if total > coreAPIBudget {
		t.Errorf("the core packages export %d identifiers, want at most %d: put new capability in a package of its own", total, coreAPIBudget)
	}
}

func exportedIdentifiers(t *testing.T, dir string) int {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	n := 0
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		n += exportedIn(f)
	}
	return n
}

func exportedIn(f *ast.File) int {
	n := 0
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			if d.Recv == nil || receiverExported(d.Recv.List[0].Type) {
				n++
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						n++
					}
				case *ast.ValueSpec:
					for _, id := range s.Names {
						if id.IsExported() {
							n++
						}
					}
				}
			}
		}
	}
	return n
}

// receiverExported reports whether a method's receiver type is exported,
// looking through pointers and type parameters.
func receiverExported(e ast.Expr) bool {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.IsExported()
		default:
			return false
		}
	}
}
