package fusebox_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestEveryExportedNameIsDocumented walks every package of every module in
// the repository, as pkg.go.dev would show them, and fails for a package
// without a package comment and for each exported name without a doc
// comment: functions, methods of exported types, types, constants and
// variables (a comment on a parenthesized group of constants or variables
// covers its members), the rule of golint and revive's "exported". Commands
// (package main) and tests are not documentation and are skipped; struct
// fields are left to the type's own comment.
func TestEveryExportedNameIsDocumented(t *testing.T) {
	pkgs := map[string][]*ast.File{} // directory -> files
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules" || name == "out") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		if f.Name.Name != "main" {
			dir := filepath.ToSlash(filepath.Dir(path))
			pkgs[dir] = append(pkgs[dir], f)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 5 {
		t.Fatalf("found %d packages: the walk is broken", len(pkgs))
	}
	for _, dir := range slices.Sorted(maps.Keys(pkgs)) {
		files := pkgs[dir]
		if !slices.ContainsFunc(files, func(f *ast.File) bool { return f.Doc != nil }) {
			t.Errorf("%s: package %s has no package comment (put one in doc.go)", dir, files[0].Name.Name)
		}
		exportedTypes := map[string]bool{}
		for _, f := range files {
			for _, d := range f.Decls {
				if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.TYPE {
					for _, s := range g.Specs {
						if ts := s.(*ast.TypeSpec); ts.Name.IsExported() {
							exportedTypes[ts.Name.Name] = true
						}
					}
				}
			}
		}
		for _, f := range files {
			for _, missing := range undocumented(f, exportedTypes) {
				t.Errorf("%s: %s has no doc comment", fset.Position(missing.Pos()), missing.Name)
			}
		}
	}
}

// undocumented lists the exported names of f that lack a doc comment.
func undocumented(f *ast.File, exportedTypes map[string]bool) []*ast.Ident {
	var missing []*ast.Ident
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() || d.Doc != nil {
				continue
			}
			if d.Recv != nil && !exportedTypes[receiverType(d.Recv.List[0].Type)] {
				continue // a method of an unexported type is not shown
			}
			missing = append(missing, d.Name)
		case *ast.GenDecl:
			grouped := d.Lparen.IsValid() && d.Doc != nil
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if !s.Name.IsExported() {
						continue
					}
					if s.Doc == nil && (d.Doc == nil || d.Lparen.IsValid()) {
						missing = append(missing, s.Name)
					}
				case *ast.ValueSpec:
					if s.Doc != nil || grouped || (d.Doc != nil && !d.Lparen.IsValid()) {
						continue
					}
					for _, n := range s.Names {
						if n.IsExported() {
							missing = append(missing, n)
						}
					}
				}
			}
		}
	}
	return missing
}

func receiverType(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

// TestDocsCiteOnlyFilesOfTheRepository reads every Markdown file of the
// repository and fails for a link or a `path.md` mention that points to a
// file the repository does not have, outside it included: the docs must
// stand on their own wherever the repository is read.
func TestDocsCiteOnlyFilesOfTheRepository(t *testing.T) {
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	mention := regexp.MustCompile("`([^`\\s]+\\.md)`")
	seen := 0
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "out" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".md") {
			return nil
		}
		seen++
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var targets []string
		for _, m := range link.FindAllStringSubmatch(string(data), -1) {
			targets = append(targets, m[1])
		}
		for _, m := range mention.FindAllStringSubmatch(string(data), -1) {
			targets = append(targets, m[1])
		}
		for _, target := range targets {
			if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") ||
				strings.HasPrefix(target, "out/") { // written by make targets
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			abs := filepath.Join(filepath.Dir(filepath.Join(root, path)), filepath.FromSlash(target))
			if rel, err := filepath.Rel(root, abs); err != nil || strings.HasPrefix(rel, "..") {
				t.Errorf("%s cites %s, outside the repository", path, target)
			} else if _, err := os.Stat(abs); err != nil {
				t.Errorf("%s cites %s, which the repository does not have", path, target)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen == 0 {
		t.Fatal("no Markdown file found: the walk is broken")
	}
}
