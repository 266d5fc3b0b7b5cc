package fusebox_test

import (
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestImportStartsNoGoroutine runs a program that only imports every
// package of the library: once the imports are initialized, main must be
// the only goroutine. A user who guards their tests with goleak needs no
// ignore rule for fusebox.
func TestImportStartsNoGoroutine(t *testing.T) {
	const prog = "tools/importcheck/main.go"
	f, err := parser.ParseFile(token.NewFileSet(), prog, nil, parser.ImportsOnly)
	require.NoError(t, err)
	imported := map[string]bool{}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		imported[p] = true
	}
	for _, pkg := range libraryPackages(t) {
		assert.True(t, imported[pkg], "%s does not import %s: add it", prog, pkg)
	}

	out, err := exec.Command("go", "run", "./tools/importcheck").CombinedOutput()
	require.NoError(t, err, "importing the library started goroutines:\n%s", out)
	assert.Equal(t, "1\n", string(out))
}

// libraryPackages lists the import paths of the root module's packages,
// the internal packages, the repository's tools and the examples apart.
func libraryPackages(t *testing.T) []string {
	t.Helper()
	var pkgs []string
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if path != "." {
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // a nested module
			}
			switch name := d.Name(); {
			case strings.HasPrefix(name, "."), name == "testdata", name == "out", name == "internal", name == "tools", name == "examples":
				return filepath.SkipDir
			}
		}
		files, _ := filepath.Glob(filepath.Join(path, "*.go"))
		for _, f := range files {
			if !strings.HasSuffix(f, "_test.go") {
				pkgs = append(pkgs, strings.TrimSuffix(module+filepath.ToSlash(path), "/."))
				break
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, pkgs)
	return pkgs
}
