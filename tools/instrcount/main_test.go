package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTotalsReadTheSummary(t *testing.T) {
	n, err := totals(strings.NewReader("events: Ir\nfn=x\n1 2\nsummary: 222\n"))
	require.NoError(t, err)
	assert.EqualValues(t, 222, n)
	_, err = totals(strings.NewReader("events: Ir\n"))
	assert.ErrorContains(t, err, "no summary line")
	_, err = totals(strings.NewReader("summary: 12x\n"))
	assert.ErrorContains(t, err, `summary " 12x"`)
}

func TestSelfCountsSumAFunctionsEntries(t *testing.T) {
	ann := `--------------------------------------------------------------------------------
Ir                   file:function
--------------------------------------------------------------------------------
13,457,440 ( 4.15%)  /usr/local/go/src/runtime/proc.go:runtime.casgstatus [/tmp/x.test]
 4,601,683 ( 1.42%)  /work/main/executor/complete.go:github.com/fusebox-go/fusebox/executor.(*call[go.shape.int]).record [/tmp/x.test]
   100,000 ( 0.03%)  /usr/local/go/src/sync/atomic/type.go:github.com/fusebox-go/fusebox/executor.(*call[go.shape.int]).record [/tmp/x.test]
   700,000 ( 0.20%)  /work/main/executor/adaptive_exec.go:github.com/fusebox-go/fusebox/executor.(*adaptState).observe [/tmp/x.test]
    16,000 ( 0.00%)  /usr/local/go/src/sync/atomic/type.go:github.com/fusebox-go/fusebox/executor.(*adaptState).observe [/tmp/x.test]
     2,016 ( 0.00%)  /usr/local/go/src/internal/sync/mutex.go:github.com/fusebox-go/fusebox/executor.Submit[github.com/a/b.T]
       400 ( 0.00%)  /usr/local/go/src/sync/atomic/type.go:sync/atomic.(*Int64).Add
`
	m, err := selfCounts(strings.NewReader(ann))
	require.NoError(t, err)
	assert.Equal(t, map[string]int64{
		"runtime.casgstatus":                    13457440,
		"executor.(*call[go.shape.int]).record": 4701683, // with the code inlined into it
		"executor.(*adaptState).observe":        716000,  // with the atomic add inlined into it
		"executor.Submit[github.com/a/b.T]":     2016,
		"atomic.(*Int64).Add":                   400,
	}, m)
}

func TestRunTakesTheDifferenceOfTwoCounts(t *testing.T) {
	cfg, err := parseArgs("x.test", "100,300", 3, 2, []string{"base=^A$", "new=^B$"})
	require.NoError(t, err)
	round := 0
	fake := func(c config, re string, n int) (profile, error) {
		round++
		n64 := int64(n)
		// A start-up cost that the difference cancels.
		p := profile{total: 5_000_000 + 1000*n64, self: map[string]int64{"start": 5_000_000, "f": 990 * n64, "g": 10 * n64}}
		if re == "^B$" {
			extra := 10 + int64((round-1)/2%3) // 10, 11, 12: one a round, both counts alike
			p.total += extra * n64
			p.self["f"] += (extra - 2) * n64 // f does 8–10 more
			p.self["h"] = 2 * n64            // a new function, 2 a call
			p.self["g"] += n64 / 2           // half an instruction more: below the threshold
		}
		return p, nil
	}
	var out strings.Builder
	require.NoError(t, run(cfg, fake, &out))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 5, out.String())
	assert.Regexp(t, `^base\s+1000$`, lines[1])
	assert.Regexp(t, `^new\s+1011\s+1\.011×\s+\+11$`, lines[2])
	assert.Regexp(t, `^\s+\+9\.0  f$`, lines[3], "the median round's own counts")
	assert.Regexp(t, `^\s+\+2\.0  h$`, lines[4])
}

func TestBadArgumentsNameTheFlag(t *testing.T) {
	for args, want := range map[[3]string]string{
		{"", "1,2", "a=b"}:       "-test",
		{"x", "2,1", "a=b"}:      "-n",
		{"x", "abc", "a=b"}:      "-n",
		{"x", "1,2", "noequals"}: `benchmark "noequals"`,
		{"x", "1,2", ""}:         "no benchmark",
	} {
		var rest []string
		if args[2] != "" {
			rest = []string{args[2]}
		}
		_, err := parseArgs(args[0], args[1], 1, 0, rest)
		assert.ErrorContains(t, err, want, args)
	}
	_, err := parseArgs("x", "1,2", 0, 0, []string{"a=b"})
	assert.ErrorContains(t, err, "-rounds")
	_, err = parseArgs("x", "1,2", 1, -1, []string{"a=b"})
	assert.ErrorContains(t, err, "-top")
}
