package fusebox_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestTheReadmeLayoutMatchesTheTree reads the README's layout table and
// fails for a package of the repository that no row covers, and for a row
// that names a directory the repository does not have. A row's first cell
// names one or more directories in backquotes: a package, a module (its
// whole tree: "`fleet` (module)"), or a tree ("`examples/...`").
func TestTheReadmeLayoutMatchesTheTree(t *testing.T) {
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(data), "\n## Layout\n")
	if !ok {
		t.Fatal("README.md has no Layout section")
	}
	table, _, _ = strings.Cut(table, "\n## ")
	name := regexp.MustCompile("`([a-z0-9_/.]+)`")
	exact, trees := map[string]bool{}, []string{}
	for _, line := range strings.Split(table, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cell := strings.Split(line, "|")[1]
		module := strings.Contains(cell, "(module)")
		for _, m := range name.FindAllStringSubmatch(cell, -1) {
			dir := m[1]
			if tree, ok := strings.CutSuffix(dir, "/..."); ok {
				dir = tree
				trees = append(trees, dir)
			} else if module {
				trees = append(trees, dir)
			}
			exact[dir] = true
			if _, err := os.Stat(dir); err != nil {
				t.Errorf("README.md's layout names %s, which the repository does not have", dir)
			}
		}
	}
	if len(exact) < 10 {
		t.Fatalf("read %d rows from the layout table: the parser is broken", len(exact))
	}
	covered := func(dir string) bool {
		if exact[dir] {
			return true
		}
		for _, tree := range trees {
			if strings.HasPrefix(dir, tree+"/") {
				return true
			}
		}
		return false
	}
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			n := d.Name()
			if path != "." && (strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_") || strings.HasPrefix(n, "zz_") || n == "testdata" || n == "out" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		if dir != "." && !covered(dir) {
			t.Errorf("package %s has no row in README.md's layout table", dir)
			exact[dir] = true // once per package
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
