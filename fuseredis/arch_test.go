package fuseredis_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLayering keeps the package in its place: it builds on the executor
// and the breaker of the library, and on go-redis; nothing else outside the
// standard library.
func TestLayering(t *testing.T) {
	allowed := []string{
		"github.com/fusebox-go/fusebox/executor",
		"github.com/fusebox-go/fusebox/breaker",
		"github.com/redis/go-redis/v9",
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !strings.Contains(strings.Split(p, "/")[0], ".") {
				continue // the standard library
			}
			ok := false
			for _, a := range allowed {
				ok = ok || p == a
			}
			if !ok {
				t.Errorf("%s imports %s; fuseredis may import only %v and the standard library", name, p, allowed)
			}
		}
	}
}
