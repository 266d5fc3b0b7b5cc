// Command releasecheck proves that every module of the repository can be
// released as it is committed: it publishes each module, as its tag would
// publish it, into a file-system module proxy, and then uses the published
// modules the way a new user would, outside the repository.
//
//	go run ./tools/releasecheck        (from the repository root: make release-check)
//	go run ./tools/releasecheck -tidy  (make tidy)
//	go run ./tools/releasecheck -work  (make work)
//
// Every directory of the commit that holds a go.mod is a module, tagged
// <dir>/<version> (the root: <version>); the version is the newest release
// in CHANGELOG.md. The committed go.work must use every module and map the
// release version of each to its directory (-work writes it so). For each
// module it checks that the
// committed go.mod has no replace directive and requires every module of
// this repository at exactly the release version, never a pseudo-version;
// it builds the module zip from the commit with git archive, as the Go
// proxy would (nested modules left out, the root LICENSE added), and
// checks that `go mod tidy` of the published module changes nothing.
//
// Then, in a fresh module outside the repository, with GOPROXY pointing at
// that proxy first (and at the local module cache, then the usual proxy,
// for third-party modules) and GOFLAGS=-mod=mod, it runs `go get` of the
// root module and of metrics, builds and runs a small program using both,
// runs `go run .../loadtest/cmd/loadtest@<version> -h`, and downloads every
// other module. Each published module is unpacked alone and must be tidy
// and pass go vet (which builds its tests) at the versions it requires,
// with the toolchain -go names when its go directive claims that Go;
// the tests of each library module (metrics, fusegrpc, ...: not the root,
// whose tests make test runs alone, nor the examples and tools) run there
// too, with the same toolchain, so at the oldest versions of their
// dependencies that they require and on the oldest Go they claim.
//
// Checksums of this repository's modules are not in the public checksum
// database before the tags exist, so GONOSUMDB names them. The module
// cache of the check is its own, in the user's cache directory, and this
// repository's modules are removed from it before each run, so a module
// zip of an earlier commit is never reused.
package main

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// The module of the repository root; nested modules extend its path.
const rootPath = "github.com/fusebox-go/fusebox"

var (
	verbose = flag.Bool("v", false, "print every go command with the time it took")
	oldest  = flag.String("go", "", "a toolchain such as go1.25.14: vet each module whose go directive it satisfies with it")
	jobs    = flag.Int("j", 4, "how many modules to check at once")
)

func main() {
	var (
		repo    = flag.String("repo", "", "repository root (default: the enclosing git work tree)")
		rev     = flag.String("rev", "HEAD", "the commit to publish")
		version = flag.String("version", "", "the version every module is published at (default: the newest release in CHANGELOG.md)")
		keep    = flag.Bool("keep", false, "print where the proxy and the new user's module are (kept until the next run)")
		tidy    = flag.Bool("tidy", false, "instead of checking, run go mod tidy in every module of the work tree against the published modules")
		work    = flag.Bool("work", false, "instead of checking, write the go.work that joins every module of the work tree")
	)
	flag.Parse()
	root, err := repoRoot(*repo)
	if err == nil && *version == "" {
		*version, err = releaseVersion(root)
	}
	if err == nil {
		if *work {
			err = writeWork(root, *version)
		} else {
			err = run(root, *rev, *version, *keep, *tidy)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "releasecheck:", err)
		os.Exit(1)
	}
	if !*work && !*tidy {
		fmt.Println("releasecheck: ok")
	}
}

// mod is one module of the commit.
type mod struct {
	dir   string // relative to the repository root, "" for the root
	path  string // module path
	gomod []byte // the committed go.mod
	file  *modfile.File
}

func (m mod) String() string {
	if m.dir == "" {
		return "go.mod"
	}
	return m.dir + "/go.mod"
}

func repoRoot(repo string) (string, error) {
	if repo == "" {
		out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
		if err != nil {
			return "", fmt.Errorf("finding the repository: %w", err)
		}
		repo = strings.TrimSpace(string(out))
	}
	return filepath.Abs(repo)
}

func run(repo, rev, version string, keep, tidy bool) error {
	start := time.Now()
	if module.CanonicalVersion(version) != version {
		return fmt.Errorf("-version %q is not a canonical semantic version", version)
	}
	mods, err := modules(repo, rev)
	if err != nil {
		return err
	}
	var problems []error
	for _, m := range mods {
		problems = append(problems, checkGoMod(m, mods, version)...)
	}
	if !tidy {
		committed, _ := git(repo, "show", rev+":go.work")
		if want := workFile(mods, version); !bytes.Equal(committed, want) {
			problems = append(problems, fmt.Errorf("go.work does not join exactly the modules of %s: run make work and commit it; want:\n%s", rev, indent(want)))
		}
	}
	if len(problems) > 0 && !tidy {
		return errors.Join(problems...)
	}

	// The check works in a directory of the user's cache that is the same
	// for every run from this work tree, so that the build cache knows the
	// third-party modules of the last run; this repository's modules are
	// removed from it first, since each run publishes them anew.
	cache, err := os.UserCacheDir()
	if err != nil {
		return err
	}
	base := filepath.Join(cache, "fusebox-releasecheck", fmt.Sprintf("%x", sha256.Sum256([]byte(repo)))[:16])
	work := filepath.Join(base, "run")
	removeAll(work)
	esc, _ := module.EscapePath(rootPath)
	for _, d := range []string{filepath.Join(base, "modcache", filepath.FromSlash(esc)), filepath.Join(base, "modcache", "cache", "download", filepath.FromSlash(esc))} {
		removeAll(d)
		removeAll(d + "@" + version)
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	if keep {
		fmt.Println("releasecheck: the published modules and the new user's module are in", work)
	}
	proxy := filepath.Join(work, "proxy")
	for _, m := range mods {
		if err := publish(repo, rev, proxy, m, version); err != nil {
			return fmt.Errorf("publishing %s: %w", m.path, err)
		}
	}
	fmt.Printf("releasecheck: published %d modules at %s from %s (%s)\n", len(mods), version, rev, since(start))

	g, err := newGoEnv(filepath.Join(base, "modcache"), proxy)
	if err != nil {
		return err
	}
	if tidy {
		for _, m := range mods {
			if err := tidyInPlace(g, filepath.Join(repo, m.dir)); err != nil {
				return err
			}
		}
		return errors.Join(problems...)
	}
	// The new user's module and the modules' own checks need nothing from
	// each other: they run side by side, so that the new user's builds use
	// the CPU while library tests wait on their servers.
	var userErr error
	var user sync.WaitGroup
	user.Go(func() {
		userErr = useAsNewUser(g, filepath.Join(work, "user"), mods, version)
		if userErr == nil {
			fmt.Printf("releasecheck: a new module got, built and ran the published modules (%s)\n", since(start))
		}
	})

	// The modules are checked side by side, -j at a time: most of the time
	// goes to library tests that wait on real servers (each test server on
	// a port of its own, which internal/testport reserves across
	// processes), not to the CPU.
	errs := make([]error, len(mods))
	sem := make(chan struct{}, max(1, *jobs))
	var wg sync.WaitGroup
	for i, m := range mods {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			errs[i] = checkTidy(g, filepath.Join(work, "tidy"), proxy, m, version)
		})
	}
	wg.Wait()
	user.Wait()
	for _, err := range append([]error{userErr}, errs...) {
		if err != nil {
			problems = append(problems, err)
		}
	}
	if len(problems) > 0 {
		return errors.Join(problems...)
	}
	fmt.Printf("releasecheck: each published module is tidy and builds alone, and each library passes its tests at the versions it requires (%s)\n", since(start))
	return nil
}

// modules lists the modules of the commit: every go.mod outside testdata.
func modules(repo, rev string) ([]mod, error) {
	out, err := git(repo, "ls-tree", "-r", "--name-only", rev)
	if err != nil {
		return nil, err
	}
	var mods []mod
	for _, name := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if path.Base(name) != "go.mod" || slices.Contains(strings.Split(name, "/"), "testdata") {
			continue
		}
		data, err := git(repo, "show", rev+":"+name)
		if err != nil {
			return nil, err
		}
		f, err := modfile.Parse(name, data, nil)
		if err != nil {
			return nil, err
		}
		dir := strings.TrimSuffix(strings.TrimSuffix(name, "go.mod"), "/")
		mods = append(mods, mod{dir: dir, path: f.Module.Mod.Path, gomod: data, file: f})
	}
	slices.SortFunc(mods, func(a, b mod) int { return strings.Compare(a.dir, b.dir) })
	if len(mods) == 0 || mods[0].dir != "" {
		return nil, fmt.Errorf("no go.mod at the root of %s", rev)
	}
	return mods, nil
}

// checkGoMod reports what would break the module for its users once
// published: a replace directive (ignored outside this repository), a
// module path that does not match its directory (the tag would not find
// it), or a requirement on another module of the repository at anything
// but the release version (a pseudo-version names no tag).
func checkGoMod(m mod, mods []mod, version string) []error {
	var errs []error
	want := rootPath
	if m.dir != "" {
		want += "/" + m.dir
	}
	if m.path != want {
		errs = append(errs, fmt.Errorf("%s: module path is %s; a tag %s would publish it as %s", m, m.path, tag(m, version), want))
	}
	for _, r := range m.file.Replace {
		errs = append(errs, fmt.Errorf("%s:%d: replace %s: a published go.mod must not replace (the go.work at the root joins the modules for development)", m, r.Syntax.Start.Line, r.Old.Path))
	}
	for _, r := range m.file.Require {
		if !isOurs(r.Mod.Path, mods) {
			continue
		}
		if r.Mod.Version != version {
			what := "a version that this release does not publish"
			if module.IsPseudoVersion(r.Mod.Version) {
				what = "a pseudo-version, which names no tag"
			}
			errs = append(errs, fmt.Errorf("%s:%d: requires %s %s, %s: require %s", m, r.Syntax.Start.Line, r.Mod.Path, r.Mod.Version, what, version))
		}
	}
	return errs
}

func isOurs(p string, mods []mod) bool {
	for _, m := range mods {
		if m.path == p {
			return true
		}
	}
	return false
}

// tag is the git tag that publishes module m at version.
func tag(m mod, version string) string {
	if m.dir == "" {
		return version
	}
	return m.dir + "/" + version
}

// publish writes m at version into the file-system proxy: the list, the
// .info, the .mod and the .zip the Go module proxy protocol serves.
func publish(repo, rev, proxy string, m mod, version string) error {
	esc, err := module.EscapePath(m.path)
	if err != nil {
		return err
	}
	dir := filepath.Join(proxy, filepath.FromSlash(esc), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	files, err := filesAt(repo, rev, m.dir)
	if err != nil {
		return err
	}
	var z bytes.Buffer
	if err := modzip.Create(&z, module.Version{Path: m.path, Version: version}, files); err != nil {
		return err
	}
	when, err := git(repo, "log", "-1", "--format=%cI", rev)
	if err != nil {
		return err
	}
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(string(when)))
	if err != nil {
		return err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, t.UTC()})
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{
		"list":            []byte(version + "\n"),
		version + ".info": info,
		version + ".mod":  m.gomod,
		version + ".zip":  z.Bytes(),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// filesAt lists the files of subdir at rev as git archive writes them,
// which is what the go command does when it fetches a tag: ignored and
// untracked files are not part of a release. A nested module without a
// LICENSE gets the root's, as the go command gives it.
func filesAt(repo, rev, subdir string) ([]modzip.File, error) {
	args := []string{"-c", "core.autocrlf=input", "-c", "core.eol=lf", "archive", "--format=zip", rev}
	if subdir != "" {
		args = append(args, "--", subdir)
	}
	data, err := git(repo, args...)
	if err != nil {
		return nil, err
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, err
	}
	prefix := ""
	if subdir != "" {
		prefix = subdir + "/"
	}
	var files []modzip.File
	haveLicense := false
	for _, zf := range zr.File {
		name, ok := strings.CutPrefix(zf.Name, prefix)
		if !ok || name == "" || strings.HasSuffix(name, "/") {
			continue
		}
		files = append(files, archived{name, zf})
		haveLicense = haveLicense || name == "LICENSE"
	}
	if !haveLicense && subdir != "" {
		if lic, err := git(repo, "cat-file", "blob", rev+":LICENSE"); err == nil {
			files = append(files, inMemory{"LICENSE", lic})
		}
	}
	return files, nil
}

// archived is a file of a git archive.
type archived struct {
	name string
	f    *zip.File
}

func (a archived) Path() string                 { return a.name }
func (a archived) Lstat() (os.FileInfo, error)  { return a.f.FileInfo(), nil }
func (a archived) Open() (io.ReadCloser, error) { return a.f.Open() }

// inMemory is a file added to a module zip.
type inMemory struct {
	name string
	data []byte
}

func (f inMemory) Path() string                 { return f.name }
func (f inMemory) Lstat() (os.FileInfo, error)  { return memInfo(f), nil }
func (f inMemory) Open() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(f.data)), nil }

type memInfo inMemory

func (f memInfo) Name() string       { return path.Base(f.name) }
func (f memInfo) Size() int64        { return int64(len(f.data)) }
func (f memInfo) Mode() fs.FileMode  { return 0o644 }
func (f memInfo) ModTime() time.Time { return time.Time{} }
func (f memInfo) IsDir() bool        { return false }
func (f memInfo) Sys() any           { return nil }

func git(repo string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = repo
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

func since(t time.Time) string { return time.Since(t).Round(100 * time.Millisecond).String() }

// removeAll deletes dir, also when it is part of a module cache, which is
// read-only by design.
func removeAll(dir string) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o755)
		}
		return nil
	})
	_ = os.RemoveAll(dir)
}
