package main

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestCommandLine(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr func(error) bool
		wantOut string
	}{
		{"-h prints the flags", []string{"-h"}, func(err error) bool { return errors.Is(err, flag.ErrHelp) }, "-reset-timeout"},
		{"queue -h prints its own", []string{"queue", "-h"}, func(err error) bool { return errors.Is(err, flag.ErrHelp) }, "-low-water"},
		{"burst -h prints its own", []string{"burst", "-h"}, func(err error) bool { return errors.Is(err, flag.ErrHelp) }, "-stall-every"},
		{"a burst criterion the executor refuses", []string{"burst", "-stuck-multiple", "0.5"}, isUsage, ""},
		{"an unknown scenario", []string{"nope"}, isUsage, "unknown scenario"},
		{"an unknown mode", []string{"-modes", "timeout,nope"}, isUsage, ""},
		{"an unknown flag", []string{"-nope"}, isUsage, "flag provided but not defined"},
		{"a stray argument", []string{"exhaustion", "extra"}, isUsage, "unexpected arguments"},
		{"an invalid scenario", []string{"-workers", "0"}, isUsage, ""},
		{"a queue without a longer reset timeout", []string{"-queue", "5"}, isUsage, ""},
		{"a chart format gonum cannot write here", []string{"-format", "gif"}, isUsage, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := run(t.Context(), tc.args, &out, &errOut)
			require.Error(t, err)
			assert.True(t, tc.wantErr(err), "got %v", err)
			assert.Contains(t, out.String()+errOut.String(), tc.wantOut)
		})
	}
}

func isUsage(err error) bool { return errors.As(err, new(usageError)) }

// Both scenarios end to end over loopback HTTP, compressed to about a second
// of wall time each.
func TestRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("real time")
	}
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"exhaustion", []string{"-duration", "6s", "-outage-start", "1s", "-outage-end", "4s", "-speed", "20",
			"-timeout", "2s", "-reset-timeout", "3s", "-progress", "0", "-timeline"},
			[]string{"timeout", "breaker", "fusebox", "catalog served during the outage", "busy"}},
		{"queue", []string{"-queue", "20", "-duration", "20s", "-speed", "40", "-queue-timeout", "10s",
			"-reset-timeout", "45s", "-progress", "0"},
			[]string{"low-water 10", "no low-water (19)", "queue first full after"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var out, errOut bytes.Buffer
			args := append([]string{tc.name, "-out", dir}, tc.args...)
			require.NoError(t, run(t.Context(), args, &out, &errOut), errOut.String())
			for _, w := range tc.want {
				assert.Contains(t, out.String(), w)
			}
			for _, f := range []string{tc.name + ".json", tc.name + ".png"} {
				st, err := os.Stat(filepath.Join(dir, f))
				require.NoError(t, err)
				assert.Positive(t, st.Size())
				assert.Contains(t, out.String(), filepath.Join(dir, f), "says where it wrote")
			}
		})
	}
}

// The burst scenario end to end over loopback HTTP, compressed to about a
// second of wall time per rule.
func TestBurstRun(t *testing.T) {
	if testing.Short() {
		t.Skip("real time")
	}
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	args := []string{"burst", "-out", dir, "-duration", "20s", "-speed", "20", "-rate", "40",
		"-stall-every", "5s", "-progress", "0"}
	require.NoError(t, run(t.Context(), args, &out, &errOut), errOut.String())
	for _, w := range []string{"stuck (default)", "trip on saturation", "refused busy", "breaker openings"} {
		assert.Contains(t, out.String(), w)
	}
	st, err := os.Stat(filepath.Join(dir, "burst.json"))
	require.NoError(t, err)
	assert.Positive(t, st.Size())
}
