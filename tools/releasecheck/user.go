package main

import (
	"bytes"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	modzip "golang.org/x/mod/zip"
)

// goEnv runs the go command as a user outside the repository would: no
// workspace, modules from the proxy only.
type goEnv struct{ env []string }

func newGoEnv(modcache, proxy string) (*goEnv, error) {
	out, err := exec.Command("go", "env", "GOMODCACHE", "GOPROXY").Output()
	if err != nil {
		return nil, fmt.Errorf("go env: %w", err)
	}
	vals := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(vals) != 2 {
		return nil, fmt.Errorf("go env: unexpected output %q", out)
	}
	proxies := []string{"file://" + filepath.ToSlash(proxy)}
	// The local module cache is a proxy too: third-party modules come
	// from it without the network when the tests have fetched them.
	if dl := filepath.Join(vals[0], "cache", "download"); isDir(dl) {
		proxies = append(proxies, "file://"+filepath.ToSlash(dl))
	}
	if vals[1] != "" && vals[1] != "off" {
		proxies = append(proxies, vals[1])
	}
	var env []string
	for _, kv := range os.Environ() {
		switch strings.SplitN(kv, "=", 2)[0] {
		case "GOPROXY", "GOFLAGS", "GONOSUMDB", "GONOSUMCHECK", "GOPRIVATE", "GONOPROXY", "GOWORK", "GOMODCACHE", "GODEBUG":
			continue
		}
		env = append(env, kv)
	}
	env = append(env,
		"GOPROXY="+strings.Join(proxies, ","),
		"GOFLAGS=-mod=mod",
		// Not in the checksum database until the tags exist.
		"GONOSUMDB="+rootPath,
		"GOWORK=off",
		// The check's own cache, so that a zip of an earlier commit
		// published under the same version is never reused; and no
		// index of it, which the go command keeps in the build cache by
		// module version, taking a version's content never to change.
		"GOMODCACHE="+modcache,
		"GODEBUG=goindex=0",
	)
	return &goEnv{env: env}, nil
}

// run runs the go command in dir and returns its combined output.
func (g *goEnv) run(dir string, extra []string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(slices.Clip(g.env), extra...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if *verbose {
		fmt.Printf("releasecheck: %5s  %s: go %s\n", since(start), filepath.Base(dir), strings.Join(args, " "))
	}
	if err != nil {
		return string(out), fmt.Errorf("in %s: go %s: %w\n%s", dir, strings.Join(args, " "), err, indent(out))
	}
	return string(out), nil
}

// program is the new user's program: a Group, one protected call, and
// the Prometheus collector over it.
const program = `package main

import (
	"context"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/metrics"
)

func main() {
	ctx := context.Background()
	g, err := executor.NewGroup(executor.GroupConfig{})
	if err != nil {
		panic(err)
	}
	defer g.Close(ctx)
	ex, err := g.Executor("payments")
	if err != nil {
		panic(err)
	}
	got, err := executor.Do(ctx, ex, func(context.Context) (string, error) { return "paid", nil })
	if err != nil {
		panic(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics.NewCollector(g, metrics.Opts{}))
	families, err := reg.Gather()
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s, %d metric families\n", got, len(families))
}
`

// useAsNewUser gets the root module and metrics into a fresh module,
// builds and runs a program with both, runs the loadtest command by its
// published version, and downloads every other module.
func useAsNewUser(g *goEnv, dir string, mods []mod, version string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if _, err := g.run(dir, nil, "mod", "init", "example.com/newuser"); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(program), 0o644); err != nil {
		return err
	}
	metrics := rootPath + "/metrics"
	if _, err := g.run(dir, nil, "get", rootPath+"@"+version, metrics+"@"+version); err != nil {
		return err
	}
	out, err := g.run(dir, nil, "run", ".")
	if err != nil {
		return err
	}
	if !strings.HasPrefix(out, "paid, ") {
		return fmt.Errorf("the new user's program printed %q, want \"paid, N metric families\"", out)
	}
	// go run pkg@version ignores the current module and refuses a module
	// with replace directives: exactly what a user's first try is.
	out, err = g.run(dir, []string{"GOFLAGS="}, "run", rootPath+"/loadtest/cmd/loadtest@"+version, "-h")
	if err != nil {
		return err
	}
	if !strings.Contains(out, "-speed") {
		return fmt.Errorf("loadtest -h printed no flags:\n%s", indent([]byte(out)))
	}
	for _, m := range mods {
		if _, err := g.run(dir, nil, "mod", "download", m.path+"@"+version); err != nil {
			return err
		}
	}
	return nil
}

// vetting lets one module's go vet run at a time. The modules share most
// of their dependencies (the root, grpc, otel, ...) at the same versions,
// and two go commands that need the same package at once both compile it:
// one at a time, each vet finds in the build cache what the ones before
// it compiled, while the tests of the modules already vetted go on beside
// it.
var vetting sync.Mutex

// checkTidy unpacks the published zip of m and runs `go mod tidy` and
// `go build ./...` in it, alone, as a user of that module would see it:
// tidy must change nothing but the checksums of this repository's own
// modules (which a committed go.sum must not hold, because they change
// with every commit of the module they belong to).
func checkTidy(g *goEnv, work, proxy string, m mod, version string) error {
	esc, err := module.EscapePath(m.path)
	if err != nil {
		return err
	}
	dir := filepath.Join(work, "_root")
	if m.dir != "" {
		dir = filepath.Join(work, strings.ReplaceAll(m.dir, "/", "-"))
	}
	zipFile := filepath.Join(proxy, filepath.FromSlash(esc), "@v", version+".zip")
	if err := modzip.Unzip(dir, module.Version{Path: m.path, Version: version}, zipFile); err != nil {
		return err
	}
	before, _ := os.ReadFile(filepath.Join(dir, "go.sum"))
	var errs []string
	for _, line := range lines(before) {
		if ours(line) {
			errs = append(errs, fmt.Sprintf("go.sum holds %q: remove it (this repository's modules are joined by go.work)", line))
		}
	}
	if _, err := g.run(dir, nil, "mod", "tidy"); err != nil {
		return fmt.Errorf("%s: %w", m, err)
	}
	afterMod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return err
	}
	if d := diff(lines(m.gomod), lines(afterMod)); d != "" {
		errs = append(errs, "go mod tidy changes go.mod:\n"+d)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "go.sum"))
	keep := func(l []string) []string { return slices.DeleteFunc(l, ours) }
	if d := diff(keep(lines(before)), keep(lines(after))); d != "" {
		errs = append(errs, "go mod tidy changes go.sum:\n"+d)
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s: %s\n  (run `make tidy`)", m, strings.Join(errs, "\n"))
	}
	// vet builds the tests too, at the versions the module requires, and
	// with the oldest Go when the module says it supports that one.
	var toolchain []string
	if *oldest != "" && m.file.Go != nil && semver.Compare("v"+m.file.Go.Version, "v"+strings.TrimPrefix(*oldest, "go")) <= 0 {
		toolchain = []string{"GOTOOLCHAIN=" + *oldest}
	}
	vetting.Lock()
	_, err = g.run(dir, toolchain, "vet", "./...")
	vetting.Unlock()
	if err != nil {
		return fmt.Errorf("%s: the published module does not build on its own: %w", m, err)
	}
	// A library module's tests, run alone, run at exactly the versions it
	// requires: the floors its users may get (in the workspace, the newest
	// version any module requires wins), and on the toolchain vet used,
	// the oldest Go the module claims: the floor of that too, and the build
	// vet just made serves the tests.
	if isLibrary(m, dir) {
		if _, err := g.run(dir, toolchain, "test", "-count=1", "./..."); err != nil {
			return fmt.Errorf("%s: the tests fail at the versions the module requires: %w", m, err)
		}
	}
	return nil
}

// isLibrary reports whether users import the module, whose files are in
// dir: it has a package other than main with code in it (not a module of
// tests only), and it is not the root (whose tests make test runs alone,
// on its oldest Go) nor one of the programs: the examples, the
// repository's tools, the load test and the comparison.
func isLibrary(m mod, dir string) bool {
	switch {
	case m.dir == "", m.dir == "loadtest", m.dir == "compare",
		strings.HasPrefix(m.dir, "examples/"), strings.HasPrefix(m.dir, "tools/"):
		return false
	}
	found := false
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || found || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
		found = err == nil && f.Name.Name != "main" && len(f.Decls) > 0
		return nil
	})
	return found
}

// ours reports whether a go.sum line is about a module of this repository.
func ours(line string) bool {
	p, _, _ := strings.Cut(line, " ")
	return p == rootPath || strings.HasPrefix(p, rootPath+"/")
}

func lines(data []byte) []string {
	var l []string
	for _, s := range strings.Split(string(data), "\n") {
		if s = strings.TrimSpace(s); s != "" {
			l = append(l, s)
		}
	}
	return l
}

// diff lists the lines only in a (-) and only in b (+).
func diff(a, b []string) string {
	var buf bytes.Buffer
	for _, s := range a {
		if !slices.Contains(b, s) {
			fmt.Fprintf(&buf, "    - %s\n", s)
		}
	}
	for _, s := range b {
		if !slices.Contains(a, s) {
			fmt.Fprintf(&buf, "    + %s\n", s)
		}
	}
	return buf.String()
}

func indent(out []byte) string {
	s := strings.TrimRight(string(out), "\n")
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// tidyInPlace runs go mod tidy in the module at dir of the work tree, alone,
// against the published modules, and drops the checksums of this
// repository's own modules from its go.sum again.
func tidyInPlace(g *goEnv, dir string) error {
	if _, err := g.run(dir, nil, "mod", "tidy"); err != nil {
		return err
	}
	sum := filepath.Join(dir, "go.sum")
	data, err := os.ReadFile(sum)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	var kept []byte
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if !ours(line) {
			kept = append(kept, line...)
		}
	}
	return os.WriteFile(sum, kept, 0o644)
}
