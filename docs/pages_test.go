// Package docs holds the guide. Its tests build the code of every page:
// each ```go block of docs/*.md must be a whole Go file (a package clause,
// imports, code) formatted by gofmt, and every block is vetted as a
// package of its own against the modules of this repository, so no page
// shows code that does not compile; and they resolve every name of the
// repository's API that the prose quotes (names_test.go).
package docs_test

import (
	"bufio"
	"fmt"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// block is one ```go block of a page.
type block struct {
	page string // file name, e.g. "getting-started.md"
	line int    // line of the opening fence
	code string
}

// goBlocks returns the ```go blocks of a Markdown file.
func goBlocks(path string) ([]block, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var (
		out  []block
		cur  *block
		line int
		sb   strings.Builder
	)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line++
		text := sc.Text()
		trimmed := strings.TrimSpace(text)
		switch {
		case cur == nil && trimmed == "```go":
			cur = &block{page: filepath.Base(path), line: line}
			sb.Reset()
		case cur != nil && trimmed == "```":
			cur.code = sb.String()
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			sb.WriteString(text)
			sb.WriteByte('\n')
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("%s:%d: a ```go block is never closed", path, cur.line)
	}
	return out, sc.Err()
}

// hasPackageClause reports whether code starts, after comments and blank
// lines, with a package clause.
func hasPackageClause(code string) bool {
	inComment := false
	for _, l := range strings.Split(code, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case inComment:
			if strings.Contains(l, "*/") {
				inComment = false
			}
		case l == "", strings.HasPrefix(l, "//"):
		case strings.HasPrefix(l, "/*"):
			inComment = !strings.Contains(l, "*/")
		default:
			return strings.HasPrefix(l, "package ")
		}
	}
	return false
}

func TestEveryPageBuilds(t *testing.T) {
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) < 5 {
		t.Fatalf("found %d pages: the glob is broken", len(pages))
	}
	dir, err := os.MkdirTemp(".", "zz_pages_")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	n := 0
	for _, page := range pages {
		blocks, err := goBlocks(page)
		if err != nil {
			t.Fatal(err)
		}
		for i, b := range blocks {
			if !hasPackageClause(b.code) {
				t.Errorf("%s:%d: a ```go block must be a whole file, starting with its package clause", b.page, b.line)
				continue
			}
			if formatted, err := format.Source([]byte(b.code)); err == nil && string(formatted) != b.code {
				t.Errorf("%s:%d: the block is not gofmt-formatted; gofmt gives:\n%s", b.page, b.line, formatted)
			}
			pkg := filepath.Join(dir, fmt.Sprintf("%s_%d", strings.TrimSuffix(b.page, ".md"), i))
			if err := os.Mkdir(pkg, 0o755); err != nil {
				t.Fatal(err)
			}
			src := fmt.Sprintf("//line %s:%d\n%s", b.page, b.line+1, b.code)
			if err := os.WriteFile(filepath.Join(pkg, "page.go"), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			n++
		}
	}
	if n == 0 {
		t.Fatal("no ```go block in any page")
	}
	// vetFlags match the build of this test (-race under go test -race), so
	// that the packages the pages import come from the build cache.
	out, err := exec.Command("go", append(append([]string{"vet"}, vetFlags...), "./"+dir+"/...")...).CombinedOutput()
	if err != nil {
		t.Fatalf("the code of the guide does not build:\n%s", out)
	}
	t.Logf("%d code blocks of %d pages build", n, len(pages))
}
