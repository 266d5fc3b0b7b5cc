package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRatiosArePerRound(t *testing.T) {
	in := `goos: linux
BenchmarkCall/background/go+chan/serial-2   100  400 ns/op  160 B/op  2 allocs/op
BenchmarkCall/background/fusebox/serial-2   100  800 ns/op  216 B/op  2 allocs/op
BenchmarkCall/background/go+chan/serial-2   100  1000 ns/op
BenchmarkCall/background/fusebox/serial-2   100  1500 ns/op
BenchmarkCall/background/go+chan/serial-2   100  500 ns/op
BenchmarkCall/background/fusebox/serial-2   100  900 ns/op
BenchmarkReject/open-2 100 38 ns/op
`
	var out strings.Builder
	require.NoError(t, run(strings.NewReader(in), &out, "go+chan"))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 4)
	// Ratios per round: 2.0, 1.5, 1.8: median 1.8 (a ratio of the medians would say 1.8 too, by chance; the range tells them apart).
	assert.Contains(t, lines[2], "900.0")
	assert.Contains(t, lines[2], "1.80×  1.50–2.00 (3)")
	assert.NotContains(t, lines[1], "×", "a baseline has no ratio")
	assert.NotContains(t, lines[3], "×", "nor has a benchmark without one")
}

func TestBadNumbersAreRefused(t *testing.T) {
	err := run(strings.NewReader("BenchmarkX-2 10 abc ns/op\n"), &strings.Builder{}, "go+chan")
	assert.ErrorContains(t, err, `BenchmarkX-2: ns/op "abc"`)
}
