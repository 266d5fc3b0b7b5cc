package config_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/config"
)

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestTheDocumentIsBounded(t *testing.T) {
	t.Run("a document longer than MaxSize is refused before it is read", func(t *testing.T) {
		doc := []byte(`{"//": ` + strings.Repeat("[", 6_000_000) + strings.Repeat("]", 6_000_000) + `}`) // 12 MB
		var err error
		n := allocated(func() { _, err = config.Parse(doc) })
		require.EqualError(t, err, "config: the document is longer than 1048576 bytes (config.MaxSize)")
		assert.Less(t, n, uint64(64<<10), "bytes allocated")

		path := filepath.Join(t.TempDir(), "fusebox.json")
		require.NoError(t, os.WriteFile(path, doc, 0o600))
		n = allocated(func() { _, err = config.Load(path) })
		require.ErrorContains(t, err, "fusebox.json: config: the document is longer than 1048576 bytes (config.MaxSize)")
		assert.Less(t, n, uint64(8<<20), "Load reads no more than MaxSize+1 bytes")
	})
	t.Run("nesting deeper than MaxDepth is refused, with its line and column", func(t *testing.T) {
		deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
		_, err := config.Parse([]byte("{\n  \"//\": " + deep(31) + "\n}")) // 32 levels with the top object
		require.NoError(t, err)
		_, err = config.Parse([]byte("{\n  \"//\": " + deep(32) + "\n}"))
		require.EqualError(t, err, "config: line 2, column 40: nested deeper than 32 levels (config.MaxDepth)")
		_, err = config.Parse([]byte(`{"default": {"slots": ` + deep(40) + `}}`))
		require.ErrorContains(t, err, "nested deeper than 32 levels (config.MaxDepth)")
		_, err = config.Parse([]byte(`{"//": "` + deep(40) + `"}`))
		require.NoError(t, err, "brackets in a string are not nesting")
	})
	// The most a document of MaxSize can cost, where nothing is a setting:
	// comments, unknown keys and values of the wrong type are scanned,
	// not made into a value per element (a flat array of a million
	// elements in a comment allocated 465 MiB, 3.7 s, before).
	for _, tc := range []struct{ name, doc string }{
		{"a comment of a flat array", `{"//": [` + strings.Repeat("1,", 520_000) + `1]}`},
		{"a comment of strings", `{"//": [` + strings.Repeat(`"aaaaaaaa",`, 95_000) + `1]}`},
		{"an array where a number belongs", `{"default": {"slots": [` + strings.Repeat("1,", 520_000) + `1]}}`},
		{"an unknown key", `{"default": {"workerz": [` + strings.Repeat("1,", 520_000) + `1]}}`},
		{"an array where a supplier belongs", `{"suppliers": {"b": [` + strings.Repeat("[1],", 200_000) + `1]}}`},
	} {
		t.Run("a document of MaxSize costs a few MiB: "+tc.name, func(t *testing.T) {
			require.LessOrEqual(t, len(tc.doc), config.MaxSize)
			doc := []byte(tc.doc)
			n := allocated(func() { _, _ = config.Parse(doc) })
			assert.Less(t, n, uint64(16<<20), "bytes allocated")
		})
	}
}
