package fusebox_test

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/doc"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Doc comments are contracts: what a name does and promises, in a few
// lines. Mechanisms and measurements belong in docs/design.md.
const (
	maxDocLines      = 15  // a doc comment of an exported name
	maxExecutorLines = 400 // the executor's `go doc -all`
)

// TestDocCommentsAreShort fails when a doc comment of an exported name (a
// type, function, method, constant, variable or struct field) in a library
// package of the root module runs over maxDocLines lines.
func TestDocCommentsAreShort(t *testing.T) {
	for _, dir := range libraryDirs(t) {
		fset, files := parseDir(t, dir)
		seen := map[*ast.CommentGroup]bool{}
		for _, f := range files {
			for _, d := range f.Decls {
				for name, g := range exportedDocs(d) {
					if seen[g] {
						continue
					}
					seen[g] = true
					if n := commentLines(g); n > maxDocLines {
						t.Errorf("%s: the doc comment of %s is %d lines, want at most %d",
							fset.Position(g.Pos()), name, n, maxDocLines)
					}
				}
			}
		}
	}
}

// TestExecutorGoDocIsShort fails when `go doc -all ./executor` would print
// more than maxExecutorLines lines. It renders the package as go doc does
// (package clause, package comment, then each exported declaration with
// its comment) with go/doc, to within a few lines of the real output.
func TestExecutorGoDocIsShort(t *testing.T) {
	if n := goDocLines(t, "executor"); n > maxExecutorLines {
		t.Errorf("go doc -all ./executor prints about %d lines, want at most %d", n, maxExecutorLines)
	}
}

// libraryDirs returns the root module's library packages: every directory
// with non-test Go files, except nested modules, examples/, internal/,
// tools/ and testdata.
func libraryDirs(t *testing.T) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if path != "." {
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir
			}
			switch top := strings.Split(filepath.ToSlash(path), "/")[0]; {
			case strings.HasPrefix(d.Name(), "."), d.Name() == "testdata",
				top == "examples", top == "internal", top == "tools":
				return filepath.SkipDir
			}
		}
		if m, _ := filepath.Glob(filepath.Join(path, "*.go")); len(m) > 0 && path != "." {
			dirs = append(dirs, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 5 {
		t.Fatalf("found only %d library packages: the walk is broken", len(dirs))
	}
	return dirs
}

// parseDir parses the non-test Go files of dir, with comments.
func parseDir(t *testing.T, dir string) (*token.FileSet, []*ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return fset, files
}

// commentLines counts the source lines of g, /* */ comments included.
func commentLines(g *ast.CommentGroup) int {
	n := 0
	for _, c := range g.List {
		n += strings.Count(c.Text, "\n") + 1
	}
	return n
}

// exportedDocs returns the doc comments of the exported names d declares,
// by name.
func exportedDocs(d ast.Decl) map[string]*ast.CommentGroup {
	docs := map[string]*ast.CommentGroup{}
	add := func(name string, g *ast.CommentGroup) {
		if g != nil && ast.IsExported(name[strings.LastIndex(name, ".")+1:]) {
			docs[name] = g
		}
	}
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv != nil && !ast.IsExported(recvName(d.Recv.List[0].Type)) {
			return docs
		}
		name := d.Name.Name
		if d.Recv != nil {
			name = recvName(d.Recv.List[0].Type) + "." + name
		}
		add(name, d.Doc)
	case *ast.GenDecl:
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				add(s.Name.Name, s.Doc)
				if st, ok := s.Type.(*ast.StructType); ok && s.Name.IsExported() {
					for _, f := range st.Fields.List {
						for _, n := range f.Names {
							add(s.Name.Name+"."+n.Name, f.Doc)
						}
					}
				}
			case *ast.ValueSpec:
				for _, n := range s.Names {
					add(n.Name, s.Doc)
				}
			}
		}
		for _, s := range d.Specs { // a group's comment documents its names
			var names []*ast.Ident
			switch s := s.(type) {
			case *ast.TypeSpec:
				names = []*ast.Ident{s.Name}
			case *ast.ValueSpec:
				names = s.Names
			}
			for _, n := range names {
				add(n.Name, d.Doc)
			}
		}
	}
	return docs
}

// recvName returns the name of a receiver's type.
func recvName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// goDocLines renders dir's package as `go doc -all` does and counts the
// lines.
func goDocLines(t *testing.T, dir string) int {
	t.Helper()
	fset, files := parseDir(t, dir)
	p, err := doc.NewFromFiles(fset, files, module+dir, doc.AllDecls)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	newlines := func(n int) {
		for !bytes.HasSuffix(b.Bytes(), bytes.Repeat([]byte{'\n'}, n)) {
			b.WriteByte('\n')
		}
	}
	text := func(s string) {
		pr := p.Printer()
		pr.TextPrefix, pr.TextCodePrefix = "    ", "        "
		b.Write(pr.Text(p.Parser().Parse(s)))
	}
	emit := func(comment string, node any) {
		if err := format.Node(&b, fset, node); err != nil {
			t.Fatal(err)
		}
		newlines(1)
		if comment != "" {
			text(comment)
			newlines(2)
		}
	}
	fmt.Fprintf(&b, "package %s // import %q\n\n", p.Name, module+dir)
	pr := p.Printer()
	pr.TextCodePrefix = "    "
	b.Write(pr.Text(p.Parser().Parse(p.Doc)))
	newlines(1)
	values := func(header string, vs []*doc.Value) {
		shown := false
		for _, v := range vs {
			if !anyExported(v.Names) {
				continue
			}
			if !shown && header != "" {
				fmt.Fprintf(&b, "\n%s\n\n", header)
				shown = true
			}
			emit(v.Doc, exportedSpecs(v.Decl))
		}
	}
	values("CONSTANTS", p.Consts)
	values("VARIABLES", p.Vars)
	header := false
	for _, f := range p.Funcs {
		if ast.IsExported(f.Name) {
			if !header {
				b.WriteString("\nFUNCTIONS\n\n")
				header = true
			}
			emit(f.Doc, f.Decl)
		}
	}
	header = false
	for _, typ := range p.Types {
		if !ast.IsExported(typ.Name) {
			continue
		}
		if !header {
			b.WriteString("\nTYPES\n\n")
			header = true
		}
		trimUnexported(typ.Decl)
		emit(typ.Doc, typ.Decl)
		newlines(2)
		values("", append(typ.Consts, typ.Vars...))
		for _, f := range append(typ.Funcs, typ.Methods...) {
			if ast.IsExported(f.Name) {
				emit(f.Doc, f.Decl)
				newlines(2)
			}
		}
	}
	// Funcs of unexported types are shown nowhere by this walk; go doc
	// lists them under FUNCTIONS. Count them the same way.
	for _, typ := range p.Types {
		if ast.IsExported(typ.Name) {
			continue
		}
		for _, f := range typ.Funcs {
			if ast.IsExported(f.Name) {
				emit(f.Doc, f.Decl)
			}
		}
	}
	return bytes.Count(b.Bytes(), []byte{'\n'})
}

func anyExported(names []string) bool {
	for _, n := range names {
		if ast.IsExported(n) {
			return true
		}
	}
	return false
}

// exportedSpecs returns d with only the specs that name an exported value.
func exportedSpecs(d *ast.GenDecl) *ast.GenDecl {
	c := *d
	c.Doc = nil
	c.Specs = nil
	for _, s := range d.Specs {
		if vs, ok := s.(*ast.ValueSpec); ok && anyExported(identNames(vs.Names)) {
			c.Specs = append(c.Specs, s)
		}
	}
	return &c
}

func identNames(ids []*ast.Ident) []string {
	var s []string
	for _, id := range ids {
		s = append(s, id.Name)
	}
	return s
}

// trimUnexported drops the unexported fields of a struct type and the
// unexported methods of an interface, leaving one comment line that says
// so, as go doc does.
func trimUnexported(d *ast.GenDecl) {
	for _, s := range d.Specs {
		ts := s.(*ast.TypeSpec)
		var fl *ast.FieldList
		switch x := ts.Type.(type) {
		case *ast.StructType:
			fl = x.Fields
		case *ast.InterfaceType:
			fl = x.Methods
		default:
			continue
		}
		var kept []*ast.Field
		trimmed := false
		for _, f := range fl.List {
			if len(f.Names) == 0 || anyExported(identNames(f.Names)) {
				kept = append(kept, f)
			} else {
				trimmed = true
			}
		}
		if trimmed { // one line, as go doc's "// Has unexported fields."
			f := &ast.Field{Type: ast.NewIdent("unexported")}
			if _, ok := ts.Type.(*ast.StructType); ok {
				f.Names = []*ast.Ident{ast.NewIdent("_")}
			}
			kept = append(kept, f)
		}
		fl.List = kept
	}
}
