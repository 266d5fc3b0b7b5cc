package main

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/fusebox-go/fusebox/config"
	"github.com/fusebox-go/fusebox/executor"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestWatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fusebox.json")
	stamp := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	// write replaces the file atomically, as watch's doc asks: a new file
	// with its modification time set, renamed over the old one, so that a
	// poll never sees the content before its time (and reads it twice).
	write := func(body string) {
		tmp := path + ".new"
		require.NoError(t, os.WriteFile(tmp, []byte(body), 0o600))
		stamp = stamp.Add(time.Second)
		require.NoError(t, os.Chtimes(tmp, stamp, stamp))
		require.NoError(t, os.Rename(tmp, path))
	}
	write(`{"suppliers": {"payments": {"slots": 2}}}`)
	synctest.Test(t, func(t *testing.T) {
		cfg, err := config.Load(path)
		require.NoError(t, err)
		g, err := executor.NewGroup(cfg)
		require.NoError(t, err)
		defer g.Close(context.Background())
		var mu sync.Mutex
		var reports []error
		ctx, stop := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		wg.Go(func() {
			watch(ctx, g, path, time.Second, func(err error) {
				mu.Lock()
				reports = append(reports, err)
				mu.Unlock()
			})
		})
		workers := func() int {
			ex, ok := g.Lookup("payments")
			require.True(t, ok)
			return ex.Stats().Slots
		}

		time.Sleep(3 * time.Second)
		assert.Empty(t, reports, "an unchanged file is not read again")

		write(`{"suppliers": {"payments": {"slots": 7}, "search": {}}}`)
		time.Sleep(time.Second)
		synctest.Wait()
		assert.Equal(t, 7, workers())
		_, ok := g.Lookup("search")
		assert.True(t, ok, "a new supplier gets its executor")

		write(`{"suppliers": {"payments": {"slots": -1}}}`)
		time.Sleep(time.Second)
		synctest.Wait()
		assert.Equal(t, 7, workers(), "an invalid file changes nothing")

		stop()
		wg.Wait()
		require.Len(t, reports, 2)
		assert.NoError(t, reports[0])
		assert.ErrorContains(t, reports[1], "Slots")
	})
}
