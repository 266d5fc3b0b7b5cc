package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"
)

// workFile is the go.work that joins mods for development: it uses every
// module, and maps each module's release version to its directory, since
// a module of a workspace that another requires at a version does not
// replace that version in the module graph by itself.
func workFile(mods []mod, version string) []byte {
	goVersion := "1.25.0"
	for _, m := range mods {
		if m.file.Go != nil && semver.Compare("v"+m.file.Go.Version, "v"+goVersion) > 0 {
			goVersion = m.file.Go.Version
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Written by make work: every module of the repository, each release\n")
	fmt.Fprintf(&b, "// version of ours mapped to its directory. The go.mod files stay free\n")
	fmt.Fprintf(&b, "// of replace directives, as published modules must be.\n\n")
	fmt.Fprintf(&b, "go %s\n\nuse (\n", goVersion)
	for _, m := range mods {
		fmt.Fprintf(&b, "\t%s\n", m.local())
	}
	fmt.Fprintf(&b, ")\n\nreplace (\n")
	for _, m := range mods {
		fmt.Fprintf(&b, "\t%s %s => %s\n", m.path, version, m.local())
	}
	for _, p := range workPins {
		fmt.Fprintf(&b, "\t%s => %s %s\n", p.path, p.path, p.version)
	}
	fmt.Fprintf(&b, ")\n")
	return b.Bytes()
}

// workPins hold a third-party module of the workspace at the version the
// library's modules are tested with, where a tool module's dependency
// would raise it for every module in the one build of make test (each
// module alone still resolves its own go.mod, as release-check shows).
var workPins = []struct{ path, version string }{
	// sentinel-golang v1.0.4 (compare) declares go 1.13, so its whole
	// requirement graph comes along, and with it a google.golang.org/genproto
	// of 2019 that still holds googleapis/rpc: for fusegrpc and the others
	// that import grpc/status, an ambiguous import. The first release
	// without that package.
	{"google.golang.org/genproto", "v0.0.0-20230526203410-71b5a4ffd15e"},
	// go-zero v1.10.3 (overload, compare) requires go-redis v9.21.0, under
	// which a PubSub's Receive on a hooked client never returns
	// (fuseredis's TestBlockingCommandsHoldNoSlot hung for 7 minutes);
	// fuseredis and fleet are tested up to v9.17.3.
	{"github.com/redis/go-redis/v9", "v9.17.3"},
}

// local is the module's directory as go.work names it.
func (m mod) local() string {
	if m.dir == "" {
		return "."
	}
	return "./" + m.dir
}

// writeWork writes the go.work for the modules of the work tree, so that a
// module added there joins the workspace before it is committed.
func writeWork(repo, version string) error {
	mods, err := modulesInTree(repo)
	if err != nil {
		return err
	}
	file := filepath.Join(repo, "go.work")
	old, _ := os.ReadFile(file)
	want := workFile(mods, version)
	if bytes.Equal(old, want) {
		return nil
	}
	fmt.Printf("releasecheck: go.work now joins %d modules: commit it\n", len(mods))
	return os.WriteFile(file, want, 0o644)
}

// modulesInTree finds every go.mod of the work tree, skipping what the go
// command skips (directories starting with . or _, testdata) and
// node_modules.
func modulesInTree(repo string) ([]mod, error) {
	var mods []mod
	err := filepath.WalkDir(repo, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && p != repo && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || name != "go.mod" {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		f, err := modfile.ParseLax(p, data, nil)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(repo, filepath.Dir(p))
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(rel)
		if dir == "." {
			dir = ""
		}
		mods = append(mods, mod{dir: dir, path: f.Module.Mod.Path, gomod: data, file: f})
		return nil
	})
	slices.SortFunc(mods, func(a, b mod) int { return strings.Compare(a.dir, b.dir) })
	return mods, err
}

var released = regexp.MustCompile(`(?m)^## \[v?(\d+\.\d+\.\d+[^\]]*)\]`)

// releaseVersion is the newest release of CHANGELOG.md: its first
// "## [X.Y.Z]" heading ("## [Unreleased]" does not match).
func releaseVersion(repo string) (string, error) {
	data, err := os.ReadFile(filepath.Join(repo, "CHANGELOG.md"))
	if err != nil {
		return "", fmt.Errorf("reading the release version: %w", err)
	}
	m := released.FindSubmatch(data)
	if m == nil {
		return "", fmt.Errorf("CHANGELOG.md has no release heading such as \"## [0.1.0] - 2026-12-01\"")
	}
	return "v" + string(m[1]), nil
}
