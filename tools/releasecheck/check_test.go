package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/mod/modfile"
)

func parse(t *testing.T, dir, gomod string) mod {
	t.Helper()
	f, err := modfile.Parse("go.mod", []byte(gomod), nil)
	require.NoError(t, err)
	return mod{dir: dir, path: f.Module.Mod.Path, gomod: []byte(gomod), file: f}
}

func TestCheckGoMod(t *testing.T) {
	root := parse(t, "", "module github.com/fusebox-go/fusebox\n\ngo 1.25.0\n")
	tests := []struct {
		name  string
		dir   string
		gomod string
		want  []string // substrings, one per expected problem
	}{
		{
			name:  "a module that requires the root at the release version passes",
			dir:   "metrics",
			gomod: "module github.com/fusebox-go/fusebox/metrics\n\ngo 1.25.0\n\nrequire github.com/fusebox-go/fusebox v0.1.0\n",
		},
		{
			name:  "a replace directive is refused",
			dir:   "metrics",
			gomod: "module github.com/fusebox-go/fusebox/metrics\n\ngo 1.25.0\n\nrequire github.com/fusebox-go/fusebox v0.1.0\n\nreplace github.com/fusebox-go/fusebox => ../\n",
			want:  []string{"metrics/go.mod:7: replace github.com/fusebox-go/fusebox"},
		},
		{
			name:  "a pseudo-version of the root is refused",
			dir:   "fusegrpc",
			gomod: "module github.com/fusebox-go/fusebox/fusegrpc\n\ngo 1.25.0\n\nrequire github.com/fusebox-go/fusebox v0.0.0-00010101000000-000000000000\n",
			want:  []string{"fusegrpc/go.mod:5: requires github.com/fusebox-go/fusebox v0.0.0-00010101000000-000000000000, a pseudo-version"},
		},
		{
			name:  "another version than the release is refused",
			dir:   "fusegrpc",
			gomod: "module github.com/fusebox-go/fusebox/fusegrpc\n\ngo 1.25.0\n\nrequire github.com/fusebox-go/fusebox v0.0.9\n",
			want:  []string{"v0.0.9, a version that this release does not publish: require v0.1.0"},
		},
		{
			name:  "a module path that does not match the directory is refused",
			dir:   "otel",
			gomod: "module github.com/fusebox-go/fusebox/fuseotel\n\ngo 1.25.0\n",
			want:  []string{"otel/go.mod: module path is github.com/fusebox-go/fusebox/fuseotel; a tag otel/v0.1.0 would publish it as github.com/fusebox-go/fusebox/otel"},
		},
		{
			name:  "third-party pseudo-versions are not this check's business",
			dir:   "compare",
			gomod: "module github.com/fusebox-go/fusebox/compare\n\ngo 1.26.0\n\nrequire (\n\tgithub.com/afex/hystrix-go v0.0.0-20180502004556-fa1af6a1f4f5\n\tgithub.com/fusebox-go/fusebox v0.1.0\n)\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := parse(t, tt.dir, tt.gomod)
			errs := checkGoMod(m, []mod{root, m}, "v0.1.0")
			require.Len(t, errs, len(tt.want), "got %v", errs)
			for i, want := range tt.want {
				assert.Contains(t, errs[i].Error(), want)
			}
		})
	}
}

func TestWorkFileJoinsEveryModuleAtTheReleaseVersion(t *testing.T) {
	mods := []mod{
		parse(t, "", "module github.com/fusebox-go/fusebox\n\ngo 1.25.0\n"),
		parse(t, "loadtest", "module github.com/fusebox-go/fusebox/loadtest\n\ngo 1.26.0\n"),
	}
	got := string(workFile(mods, "v0.1.0"))
	assert.Contains(t, got, "\ngo 1.26.0\n", "the newest go directive of any module")
	assert.Contains(t, got, "use (\n\t.\n\t./loadtest\n)\n")
	assert.Contains(t, got, "replace (\n\tgithub.com/fusebox-go/fusebox v0.1.0 => .\n\tgithub.com/fusebox-go/fusebox/loadtest v0.1.0 => ./loadtest\n")
	assert.Contains(t, got, "\tgithub.com/redis/go-redis/v9 => github.com/redis/go-redis/v9 v9.17.3\n)\n", "the pins, last")
}

func TestModulesInTreeFindsNestedModulesAndSkipsWhatGoSkips(t *testing.T) {
	repo := t.TempDir()
	for dir, path := range map[string]string{
		"":                   "github.com/fusebox-go/fusebox",
		"fusegrpc":           "github.com/fusebox-go/fusebox/fusegrpc",
		"dashboard/browser":  "github.com/fusebox-go/fusebox/dashboard/browser",
		"x/testdata/m":       "example.com/skipped",
		".bin/m":             "example.com/skipped",
		"ui/node_modules/m":  "example.com/skipped",
		"_scratch/whatever":  "example.com/skipped",
		"executor/testdata/": "example.com/skipped",
	} {
		d := filepath.Join(repo, filepath.FromSlash(dir))
		require.NoError(t, os.MkdirAll(d, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(d, "go.mod"), []byte("module "+path+"\n\ngo 1.25.0\n"), 0o644))
	}
	mods, err := modulesInTree(repo)
	require.NoError(t, err)
	var dirs []string
	for _, m := range mods {
		dirs = append(dirs, m.dir)
	}
	assert.Equal(t, []string{"", "dashboard/browser", "fusegrpc"}, dirs)
}

func TestReleaseVersionIsTheNewestReleaseOfTheChangelog(t *testing.T) {
	repo := t.TempDir()
	changelog := "# Changelog\n\n## [Unreleased]\n\n## [0.2.0] - 2027-01-01\n\n## [0.1.0] - 2026-12-01\n"
	require.NoError(t, os.WriteFile(filepath.Join(repo, "CHANGELOG.md"), []byte(changelog), 0o644))
	got, err := releaseVersion(repo)
	require.NoError(t, err)
	assert.Equal(t, "v0.2.0", got)

	require.NoError(t, os.WriteFile(filepath.Join(repo, "CHANGELOG.md"), []byte("# Changelog\n\n## [Unreleased]\n"), 0o644))
	_, err = releaseVersion(repo)
	assert.ErrorContains(t, err, "no release heading")
}

func TestTidyComparisonIgnoresOnlyOurOwnChecksums(t *testing.T) {
	assert.True(t, ours("github.com/fusebox-go/fusebox v0.1.0 h1:abc="))
	assert.True(t, ours("github.com/fusebox-go/fusebox/metrics v0.1.0/go.mod h1:abc="))
	assert.False(t, ours("github.com/fusebox-go/fuseboxer v0.1.0 h1:abc="))
	assert.False(t, ours("github.com/prometheus/client_golang v1.11.1 h1:abc="))

	d := diff([]string{"a", "b"}, []string{"b", "c"})
	assert.Equal(t, "    - a\n    + c\n", d)
	assert.Empty(t, diff([]string{"a"}, []string{"a"}))
	assert.True(t, strings.HasPrefix(indent([]byte("x\ny\n")), "    x\n    y"))
}

func TestLibraryModulesAreThoseUsersImport(t *testing.T) {
	write := func(t *testing.T, files map[string]string) string {
		dir := t.TempDir()
		for name, src := range files {
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644))
		}
		return dir
	}
	lib := write(t, map[string]string{"doc.go": "// Package m.\npackage m\n", "m.go": "package m\n\nfunc F() {}\n"})
	testsOnly := write(t, map[string]string{"doc.go": "// Package m.\npackage m\n", "m_test.go": "package m\n\nfunc TestF() {}\n"})
	command := write(t, map[string]string{"main.go": "package main\n\nfunc main() {}\n"})
	tests := []struct {
		name string
		dir  string
		path string
		want bool
	}{
		{"a nested module with code is a library", "metrics", lib, true},
		{"so is a deeper one", "dashboard/widgets", lib, true},
		{"a module of tests only is not", "dashboard/browsertest", testsOnly, false},
		{"a module of commands only is not", "tools", command, false},
		{"the root is tested alone by make test", "", lib, false},
		{"the load test and the comparison are programs", "loadtest", lib, false},
		{"examples are programs", "examples/grpc", lib, false},
		{"the repository's tools are not imported", "tools/releasecheck", lib, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, isLibrary(mod{dir: tt.dir}, tt.path))
		})
	}
}
