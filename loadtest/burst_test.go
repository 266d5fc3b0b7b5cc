package loadtest

import (
	"os"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
)

func runBurstVirtual(t *testing.T, cfg BurstConfig) *BurstReport {
	t.Helper()
	var rep *BurstReport
	synctest.Test(t, func(t *testing.T) {
		var err error
		rep, err = RunBurst(t.Context(), cfg)
		require.NoError(t, err)
	})
	require.Len(t, rep.Runs, 2)
	return rep
}

func TestBurstDraft(t *testing.T) {
	rep := runBurstVirtual(t, DefaultBurst())
	rep.WriteTable(os.Stdout)
}
