package docs_test

import (
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// The pages name the library's API in inline code spans, and a renamed
// field or function must fail the test rather than leave a page that
// does not compile. TestEveryNamedIdentifierResolves reads the inline
// spans of docs/*.md and the README (fenced blocks are built by
// TestEveryPageBuilds) and checks each span that is a Go identifier
// reference against the declarations of this repository's packages,
// parsed with go/parser. The rule for a span:
//
//   - It must parse as a Go expression (go/parser.ParseExpr); a span that
//     does not, such as a flag, a command, a URL or a path, is not Go and
//     is skipped. A call whose arguments do not parse (`Close(…)`) counts
//     as the name before the parentheses.
//   - A selector whose head is the name of a package of the repository
//     (`executor.Config`, `breaker.ErrOpen`, `executor.Do[T]`) or an
//     exported type of one (`Config.Slots`, `(*Executor).Stats`,
//     `Stats.Breaker.State`) is checked all along: each name must be a
//     member (a package-level name; a field or method, promoted ones
//     included; the element of a slice or map field after [i]) of what
//     precedes it. A call is checked for its number of arguments, and a
//     composite literal (`executor.Config{Slots: 4}`) for its keys.
//     Type names shared by several packages (Config) pass if one of them
//     has the member.
//   - A selector whose head is a capitalized name that no package of the
//     repository declares (`HandlerConfig.Reject`) fails, unless
//     externalTypes lists it: a span names a foreign type with its package
//     (`http.Client.Timeout`), which is not checked.
//   - A bare exported name (`ErrOpen`, `InvocationTimeout`, `Do(ctx, ex,
//     fn)`) must be declared somewhere in the repository (a package-level
//     name, a field, a method, a test's name) or be used as a selector by
//     its Go code, which covers the standard library's and the
//     dependencies' names the code uses; bareNames lists the others.
//   - A span whose head is a lower-case name that is not one of the
//     repository's packages (`ctx.Err()`, `http.Client`, `fake.Call(ctx)`)
//     is a variable or a foreign package, and is skipped.

// externalTypes are capitalized heads of Type.Member spans that are not
// types of this repository, each with why it may stand unqualified.
var externalTypes = map[string]string{}

// bareNames are exported names a page may mention alone that neither the
// repository declares nor its code uses as a selector, each with why.
var bareNames = map[string]string{
	"Ring": "go-redis's redis.Ring, named in redis.md beside redis.ClusterClient, which fuseredis's code uses",
}

func TestEveryNamedIdentifierResolves(t *testing.T) {
	ix, err := loadIndex("..")
	if err != nil {
		t.Fatal(err)
	}
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join("..", "README.md"))
	checked := 0
	for _, page := range pages {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range inlineSpans(string(data)) {
			counted, err := ix.checkSpan(s.text)
			if err != nil {
				t.Errorf("%s:%d: `%s`: %v", page, s.line, s.text, err)
			}
			if counted {
				checked++
			}
		}
	}
	if checked < 100 {
		t.Fatalf("checked %d spans: the reading of the pages is broken", checked)
	}
	t.Logf("%d spans of %d pages name the repository's API and resolve", checked, len(pages))
}

// The rule above, case by case: a renamed or misused name fails, what is
// not the repository's Go is not counted.
func TestTheNameCheckCatchesWrongNames(t *testing.T) {
	ix, err := loadIndex("..")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		span    string
		counted bool
		wantErr string // "" for a name that resolves
	}{
		{"executor.Config", true, ""},
		{"executor.Config.Slots", true, ""},
		{"Config.Slots", true, ""},
		{"(*executor.Executor).Stats", true, ""},
		{"(*Executor).Stats()", true, ""},
		{"Group.Executor(name)", true, ""},
		{"breaker.ErrOpen", true, ""},
		{"*executor.RejectedError", true, ""},
		{"executor.Do[string]", true, ""},
		{"executor.Submit(ctx, ex, fn)", true, ""},
		{"executor.LogBusy(logger, time.Second)", true, ""},
		{"executor.Stats.Breaker.State", true, ""},
		{"Stats.Breaker.OpenUntil", true, ""},
		{"breaker.Config.ErrorKinds[0].Match(err)", true, ""},
		{"executor.Config{Slots: 4, Queue: 8}", true, ""},
		{"inbound.Config.Reject", true, ""},
		{"fusehttp.Transport.Base", true, ""},
		{"ErrOpen", true, ""},
		{"Close(…)", true, ""},
		{"InvocationTimeout", true, ""},

		{"executor.LogBusy(logger)", true, "executor.LogBusy takes 2 argument(s), the span gives 1"},
		{"executor.LogBusyy", true, "executor.LogBusyy: no such name"},
		{"executor.Config.Workers", true, "executor.Config.Workers: no such name"},
		{"HandlerConfig.Reject", true, "no package of the repository declares a type HandlerConfig"},
		{"inbound.Config.Rejects", true, "inbound.Config.Rejects: no such name"},
		{"Stats.Breaker.Statee", true, "no such name"},
		{"breaker.Allow()", true, "(Allow is in breaker.Breaker"},
		{"breaker.Config.ErrorKinds[0].Match(err, 1)", true, "takes 1 argument(s), the span gives 2"},
		{"executor.Config{Wokers: 4}", true, "executor.Config{Wokers}: no such name"},
		{"ErrOpenn", true, "no package of the repository declares ErrOpenn"},

		{"go test -race ./...", false, ""},
		{"ctx.Err()", false, ""},
		{"http.Client.Timeout", false, ""},
		{"fusebox.calls", false, ""},
		{"PING", false, ""},
		{"breaker.go", false, ""},
		{"docs/testing.md", false, ""},
		{"https://example.com/x", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.span, func(t *testing.T) {
			counted, err := ix.checkSpan(tt.span)
			if counted != tt.counted {
				t.Errorf("counted %v, want %v", counted, tt.counted)
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("got %v, want no error", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("got error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

// span is one inline code span of a page.
type span struct {
	text string
	line int
}

// inlineSpans returns the single-backtick code spans of a Markdown text
// outside fenced blocks; a span may wrap onto the next line.
func inlineSpans(md string) []span {
	var (
		out    []span
		fenced bool
		para   strings.Builder
		start  int
	)
	flush := func() {
		text := para.String()
		para.Reset()
		line := start
		for i := 0; i < len(text); i++ {
			if text[i] == '\n' {
				line++
				continue
			}
			if text[i] != '`' {
				continue
			}
			j := i + 1
			for j < len(text) && text[j] == '`' {
				j++
			}
			ticks := text[i:j]
			end := strings.Index(text[j:], ticks)
			if end < 0 {
				return
			}
			code := strings.TrimSpace(strings.ReplaceAll(text[j:j+end], "\n", " "))
			if len(ticks) == 1 && code != "" {
				out = append(out, span{code, line})
			}
			line += strings.Count(text[i:j+end+len(ticks)], "\n")
			i = j + end + len(ticks) - 1
		}
	}
	for n, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			flush()
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		if strings.TrimSpace(l) == "" {
			flush()
			continue
		}
		if para.Len() == 0 {
			start = n + 1
		}
		para.WriteString(l)
		para.WriteByte('\n')
	}
	flush()
	return out
}

// pkg is what a package of the repository declares.
type pkg struct {
	path  string
	funcs map[string]*ast.FuncType
	vals  map[string]bool // constants and variables
	types map[string]*typeDecl
}

// typeDecl is a declared type: its fields and methods.
type typeDecl struct {
	pkg     *pkg
	name    string
	imports map[string]string // of its file: name → import path
	fields  map[string]ast.Expr
	embeds  []ast.Expr
	methods map[string]*ast.FuncType
}

// typeRef is a type expression in the file that wrote it.
type typeRef struct {
	expr    ast.Expr
	pkg     *pkg
	imports map[string]string
}

// index holds the repository's packages by name and path.
type index struct {
	byName map[string][]*pkg
	byPath map[string]*pkg
	types  map[string][]*typeDecl // exported types by name, all packages
	known  map[string]bool        // exported names declared or used as selectors
}

// modulePath is the import path of the repository's root; every nested
// module's path is its directory below it.
const modulePath = "github.com/fusebox-go/fusebox"

// loadIndex parses every package of the repository at root (every
// module; package main and test files only feed index.known).
func loadIndex(root string) (*index, error) {
	ix := &index{byName: map[string][]*pkg{}, byPath: map[string]*pkg{}, types: map[string][]*typeDecl{}, known: map[string]bool{}}
	type method struct {
		decl *ast.FuncDecl
		pkg  *pkg
	}
	var methods []method
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "zz_") || name == "testdata" || name == "out" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				ix.known[n.Sel.Name] = true
			case *ast.Ident:
				if ast.IsExported(n.Name) {
					ix.known[n.Name] = true // declared or used anywhere, tests included
				}
			}
			return true
		})
		if f.Name.Name == "main" || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		p := ix.pkg(filepath.ToSlash(rel), f.Name.Name)
		imports := fileImports(f)
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.FuncDecl:
				if decl.Recv != nil {
					methods = append(methods, method{decl, p})
				} else {
					p.funcs[decl.Name.Name] = decl.Type
				}
			case *ast.GenDecl:
				for _, s := range decl.Specs {
					switch s := s.(type) {
					case *ast.ValueSpec:
						for _, n := range s.Names {
							p.vals[n.Name] = true
						}
					case *ast.TypeSpec:
						td := newType(p, s, imports)
						p.types[s.Name.Name] = td
						if ast.IsExported(s.Name.Name) {
							ix.types[s.Name.Name] = append(ix.types[s.Name.Name], td)
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, m := range methods {
		if td := m.pkg.types[baseName(m.decl.Recv.List[0].Type)]; td != nil {
			td.methods[m.decl.Name.Name] = m.decl.Type
		}
	}
	return ix, nil
}

// pkg returns the package in directory dir (relative to the root),
// adding it on first sight.
func (ix *index) pkg(dir, name string) *pkg {
	path := modulePath
	if dir != "." {
		path += "/" + dir
	}
	if p := ix.byPath[path]; p != nil {
		return p
	}
	p := &pkg{path: path, funcs: map[string]*ast.FuncType{}, vals: map[string]bool{}, types: map[string]*typeDecl{}}
	ix.byPath[path] = p
	ix.byName[name] = append(ix.byName[name], p)
	return p
}

// fileImports maps the names a file gives its imports to their paths.
func fileImports(f *ast.File) map[string]string {
	m := map[string]string{}
	for _, im := range f.Imports {
		path := strings.Trim(im.Path.Value, `"`)
		name := path[strings.LastIndex(path, "/")+1:]
		if im.Name != nil {
			name = im.Name.Name
		} else if v := regexp.MustCompile(`^v[0-9]+$`); v.MatchString(name) && strings.Count(path, "/") > 0 {
			rest := strings.TrimSuffix(path, "/"+name)
			name = rest[strings.LastIndex(rest, "/")+1:] // .../chi/v5 is chi
		}
		m[name] = path
	}
	return m
}

// newType records the fields, embedded types and interface methods of s.
func newType(p *pkg, s *ast.TypeSpec, imports map[string]string) *typeDecl {
	td := &typeDecl{pkg: p, name: s.Name.Name, imports: imports, fields: map[string]ast.Expr{}, methods: map[string]*ast.FuncType{}}
	switch t := s.Type.(type) {
	case *ast.StructType:
		for _, f := range t.Fields.List {
			if len(f.Names) == 0 {
				td.embeds = append(td.embeds, f.Type)
				td.fields[baseName(f.Type)] = f.Type
			}
			for _, n := range f.Names {
				td.fields[n.Name] = f.Type
			}
		}
	case *ast.InterfaceType:
		for _, f := range t.Methods.List {
			if len(f.Names) == 0 {
				td.embeds = append(td.embeds, f.Type)
			}
			for _, n := range f.Names {
				if ft, ok := f.Type.(*ast.FuncType); ok {
					td.methods[n.Name] = ft
				}
			}
		}
	}
	return td
}

// baseName is the name of the type that e (a receiver or an embedded
// field) names: T for T, *T, pkg.T and T[X].
func baseName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.SelectorExpr:
			return t.Sel.Name
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

// entity is what a span, or a part of one, names: packages, types,
// values of known types, or functions. A name several packages share
// (Config) gives several candidates; a member need be found in one.
type entity struct {
	pkgs   []*pkg
	types  []*typeDecl
	vals   []typeRef
	funcs  []*ast.FuncType
	method bool // funcs were selected from a type: a method expression
}

// empty reports whether e names nothing the index can check further.
func (e entity) empty() bool {
	return len(e.pkgs) == 0 && len(e.types) == 0 && len(e.vals) == 0 && len(e.funcs) == 0
}

// checkSpan checks one inline span, and reports whether it names the
// repository's API (and so was checked).
func (ix *index) checkSpan(text string) (bool, error) {
	x, err := parser.ParseExpr(text)
	if err != nil {
		// A call written with an ellipsis, Close(…): the name before it.
		if i := callStart(text); i > 0 {
			x, err = parser.ParseExpr(text[:i])
		}
		if err != nil {
			return false, nil // not Go
		}
	}
	c := &checker{ix: ix}
	_, err = c.resolve(x)
	return c.counted, err
}

// callStart returns the index of the parenthesis that opens the argument
// list closing text, or -1.
func callStart(text string) int {
	if !strings.HasSuffix(text, ")") {
		return -1
	}
	depth := 0
	for i := len(text) - 1; i >= 0; i-- {
		switch text[i] {
		case ')':
			depth++
		case '(':
			if depth--; depth == 0 {
				return i
			}
		}
	}
	return -1
}

// checker resolves one span.
type checker struct {
	ix      *index
	counted bool // the span's head is the repository's
}

// resolve returns what x names, or an error if x names the repository's
// API wrongly. An empty entity means there is nothing to check.
func (c *checker) resolve(x ast.Expr) (entity, error) {
	switch x := x.(type) {
	case *ast.Ident:
		return c.head(x.Name, false)
	case *ast.ParenExpr:
		return c.resolve(x.X)
	case *ast.StarExpr:
		return c.resolve(x.X)
	case *ast.UnaryExpr:
		return c.resolve(x.X)
	case *ast.SelectorExpr:
		if id, ok := x.X.(*ast.Ident); ok {
			e, err := c.head(id.Name, true)
			if err != nil || e.empty() {
				return e, err
			}
			if len(e.pkgs) > 0 && !ast.IsExported(x.Sel.Name) {
				return entity{}, nil // breaker.go: a file, not a name
			}
			return c.member(e, x.Sel.Name, id.Name+"."+x.Sel.Name)
		}
		e, err := c.resolve(x.X)
		if err != nil || e.empty() {
			return e, err
		}
		return c.member(e, x.Sel.Name, exprString(x))
	case *ast.IndexExpr:
		return c.index(x.X)
	case *ast.IndexListExpr:
		return c.index(x.X)
	case *ast.CallExpr:
		e, err := c.resolve(x.Fun)
		for _, v := range e.vals {
			if ft, ok := v.expr.(*ast.FuncType); ok { // a field of func type
				e.funcs = append(e.funcs, ft)
			}
		}
		if err != nil || len(e.funcs) == 0 {
			return entity{}, err
		}
		return entity{}, arity(e, len(x.Args), x.Ellipsis.IsValid(), exprString(x.Fun))
	case *ast.CompositeLit:
		e, err := c.resolve(x.Type)
		if err != nil || len(e.types) == 0 {
			return entity{}, err
		}
		for _, el := range x.Elts {
			if kv, ok := el.(*ast.KeyValueExpr); ok {
				if k, ok := kv.Key.(*ast.Ident); ok {
					if _, err := c.member(entity{types: e.types}, k.Name, exprString(x.Type)+"{"+k.Name+"}"); err != nil {
						return entity{}, err
					}
				}
			}
		}
		return entity{}, nil
	}
	return entity{}, nil
}

// head resolves the first name of a span; selected says a selector
// follows it.
func (c *checker) head(name string, selected bool) (entity, error) {
	if ps := c.ix.declaring(name); len(ps) > 0 && selected {
		c.counted = true
		return entity{pkgs: ps}, nil
	}
	if !ast.IsExported(name) {
		return entity{}, nil // a variable or a foreign package
	}
	if strings.ToUpper(name) == name {
		return entity{}, nil // GET, PING, RESOURCE_EXHAUSTED: not Go's names
	}
	c.counted = true
	var e entity
	e.types = c.ix.types[name]
	if len(e.types) > 0 || !selected {
		if len(e.types) == 0 && !c.ix.known[name] && bareNames[name] == "" {
			return e, fmt.Errorf("no package of the repository declares %s, and its code does not use it", name)
		}
		return e, nil
	}
	for _, ps := range c.ix.byName {
		for _, p := range ps {
			if p.vals[name] || p.funcs[name] != nil {
				return entity{}, nil // a value of the repository: its members are not checked
			}
		}
	}
	if externalTypes[name] != "" {
		c.counted = false
		return entity{}, nil
	}
	return e, fmt.Errorf("no package of the repository declares a type %s", name)
}

// declaring returns the packages called name that declare something
// (the root package holds only documentation: `fusebox.calls` is a
// metric's name).
func (ix *index) declaring(name string) []*pkg {
	var out []*pkg
	for _, p := range ix.byName[name] {
		if len(p.funcs)+len(p.vals)+len(p.types) > 0 {
			out = append(out, p)
		}
	}
	return out
}

// member resolves e.name.
func (c *checker) member(e entity, name, what string) (entity, error) {
	var out entity
	for _, p := range e.pkgs {
		switch {
		case p.types[name] != nil:
			out.types = append(out.types, p.types[name])
		case p.funcs[name] != nil:
			out.funcs = append(out.funcs, p.funcs[name])
		case p.vals[name]:
			return entity{}, nil // found; its type is not tracked
		}
	}
	for _, td := range e.types {
		c.fieldOrMethod(td, name, &out, true, 0)
	}
	for _, v := range e.vals {
		for _, td := range c.ix.named(v) {
			c.fieldOrMethod(td, name, &out, false, 0)
		}
	}
	if !out.empty() {
		return out, nil
	}
	if len(e.pkgs) == 0 && len(e.types) == 0 && !c.anyNamed(e.vals) {
		return entity{}, nil // a value of a type outside the repository
	}
	return entity{}, fmt.Errorf("%s: no such name in the repository%s", what, c.ix.owners(name))
}

// anyNamed reports whether one of vals has a type of the repository.
func (c *checker) anyNamed(vals []typeRef) bool {
	for _, v := range vals {
		if len(c.ix.named(v)) > 0 {
			return true
		}
	}
	return false
}

// fieldOrMethod adds td's field or method name (promoted ones included)
// to out.
func (c *checker) fieldOrMethod(td *typeDecl, name string, out *entity, typ bool, depth int) {
	if depth > 4 {
		return
	}
	if f, ok := td.fields[name]; ok {
		out.vals = append(out.vals, typeRef{f, td.pkg, td.imports})
		return
	}
	if m, ok := td.methods[name]; ok {
		out.funcs = append(out.funcs, m)
		out.method = out.method || typ
		return
	}
	for _, emb := range td.embeds {
		for _, etd := range c.ix.named(typeRef{emb, td.pkg, td.imports}) {
			c.fieldOrMethod(etd, name, out, typ, depth+1)
		}
	}
}

// named returns the repository's type that r names (through pointers),
// if it names one.
func (ix *index) named(r typeRef) []*typeDecl {
	switch t := r.expr.(type) {
	case *ast.StarExpr:
		return ix.named(typeRef{t.X, r.pkg, r.imports})
	case *ast.IndexExpr:
		return ix.named(typeRef{t.X, r.pkg, r.imports})
	case *ast.IndexListExpr:
		return ix.named(typeRef{t.X, r.pkg, r.imports})
	case *ast.Ident:
		if td := r.pkg.types[t.Name]; td != nil {
			return []*typeDecl{td}
		}
	case *ast.SelectorExpr:
		if id, ok := t.X.(*ast.Ident); ok {
			if p := ix.byPath[r.imports[id.Name]]; p != nil && p.types[t.Sel.Name] != nil {
				return []*typeDecl{p.types[t.Sel.Name]}
			}
		}
	}
	return nil
}

// index resolves x[i]: the element of a slice or map field, or an
// instantiation of a generic function or type.
func (c *checker) index(x ast.Expr) (entity, error) {
	e, err := c.resolve(x)
	if err != nil {
		return e, err
	}
	out := entity{pkgs: nil, types: e.types, funcs: e.funcs, method: e.method}
	for _, v := range e.vals {
		switch t := v.expr.(type) {
		case *ast.ArrayType:
			out.vals = append(out.vals, typeRef{t.Elt, v.pkg, v.imports})
		case *ast.MapType:
			out.vals = append(out.vals, typeRef{t.Value, v.pkg, v.imports})
		}
	}
	return out, nil
}

// owners lists the types of the repository that have a field or method
// called name, as a hint after a name that did not resolve.
func (ix *index) owners(name string) string {
	var have []string
	for _, tds := range ix.types {
		for _, td := range tds {
			_, f := td.fields[name]
			_, m := td.methods[name]
			if f || m {
				have = append(have, td.pkg.path[strings.LastIndex(td.pkg.path, "/")+1:]+"."+td.name)
			}
		}
	}
	for _, ps := range ix.byName {
		for _, p := range ps {
			if p.funcs[name] != nil || p.vals[name] || p.types[name] != nil {
				have = append(have, p.path[strings.LastIndex(p.path, "/")+1:])
			}
		}
	}
	if len(have) == 0 {
		return ""
	}
	sort.Strings(have)
	if len(have) > 5 {
		have = append(have[:5], "…")
	}
	return " (" + name + " is in " + strings.Join(have, ", ") + ")"
}

// arity checks a call of one of e's functions with n arguments.
func arity(e entity, n int, spread bool, what string) error {
	var want []string
	for _, ft := range e.funcs {
		params, variadic := 0, false
		for _, f := range ft.Params.List {
			params += max(1, len(f.Names))
			_, variadic = f.Type.(*ast.Ellipsis)
		}
		ok := n == params || (variadic && (n >= params-1 || spread)) || (e.method && n == params+1)
		if ok {
			return nil
		}
		if variadic {
			want = append(want, fmt.Sprintf("at least %d", params-1))
		} else {
			want = append(want, fmt.Sprint(params))
		}
	}
	return fmt.Errorf("%s takes %s argument(s), the span gives %d", what, strings.Join(want, " or "), n)
}

// exprString prints x back as Go source, for messages.
func exprString(x ast.Expr) string {
	var sb strings.Builder
	if err := format.Node(&sb, token.NewFileSet(), x); err != nil {
		return fmt.Sprintf("%T", x)
	}
	return sb.String()
}
