package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/dashboard"
)

// lines is a writer whose every write is also sent on a channel.
type lines struct {
	mu  sync.Mutex
	buf bytes.Buffer
	ch  chan string
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	select {
	case l.ch <- string(p):
	default:
	}
	return len(p), nil
}

// waitLine returns the first submatch of re in the writes, waiting at most
// a minute.
func (l *lines) waitLine(t *testing.T, re *regexp.Regexp) string {
	t.Helper()
	timeout := time.After(time.Minute)
	for {
		select {
		case s := <-l.ch:
			if m := re.FindStringSubmatch(s); m != nil {
				return m[1]
			}
		case <-timeout:
			t.Fatalf("no line matching %v", re)
		}
	}
}

func TestDashboardFlag(t *testing.T) {
	t.Run("it refuses an address other hosts can reach", func(t *testing.T) {
		var out, errOut bytes.Buffer
		err := run(t.Context(), []string{"-modes", "fusebox", "-dashboard", "0.0.0.0:8080"}, &out, &errOut)
		require.Error(t, err)
		assert.True(t, isUsage(err))
		assert.Contains(t, err.Error(), "loopback")
	})
	if testing.Short() {
		t.Skip("real time")
	}
	t.Run("it shows the fusebox executor and stays up until Ctrl-C", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		stderr := &lines{ch: make(chan string, 100)}
		var stdout bytes.Buffer
		done := make(chan error, 1)
		// Speed 4: the run takes 1.5 s of wall time, with a 500 ms
		// invocation timeout and 250 ms of healthy traffic before the
		// outage. At speed 20 (a 100 ms timeout, 50 ms of healthy traffic)
		// a loaded machine saw no call succeed at all.
		go func() {
			done <- run(ctx, []string{"-modes", "fusebox", "-out", t.TempDir(), "-duration", "6s", "-outage-start", "1s",
				"-outage-end", "4s", "-speed", "4", "-timeout", "2s", "-reset-timeout", "3s", "-progress", "0",
				"-dashboard", "127.0.0.1:0"}, &stdout, stderr)
		}()
		url := stderr.waitLine(t, regexp.MustCompile(`dashboard: open (http://\S+)`))
		stderr.waitLine(t, regexp.MustCompile(`(still serving)`))

		resp, err := http.Get(url + "api/snapshot")
		require.NoError(t, err)
		defer resp.Body.Close()
		var s dashboard.Snapshot
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&s))
		require.Len(t, s.Suppliers, 1)
		p := s.Suppliers[0]
		assert.Equal(t, "payments", p.ID)
		assert.Positive(t, p.Totals.Successes)
		assert.Positive(t, p.Totals.Rejected["saturated"]+p.Totals.Rejected["open"], "the outage tripped it")

		cancel()
		require.NoError(t, <-done)
	})
}
