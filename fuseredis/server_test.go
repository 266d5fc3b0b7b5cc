package fuseredis_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fuseboxtest"
	"github.com/fusebox-go/fusebox/fuseredis"
	"github.com/fusebox-go/fusebox/internal/testport"
)

// server is a redis-server process of a test, on 127.0.0.1 on a free port,
// without persistence.
type server struct {
	t    testing.TB
	port int
	args []string
	cmd  *exec.Cmd
}

// freePort returns a port nothing listened on a moment ago, that no
// other test, of this process or another test process beside it, has been
// given: a test that kills and restarts its server keeps its port.
func freePort(t testing.TB) int {
	port, err := testport.Free()
	require.NoError(t, err)
	return port
}

// startRedis starts redis-server. A machine without it fails the test with
// instructions: these tests run in CI, they are never skipped.
func startRedis(t testing.TB, extra ...string) *server {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatalf("redis-server is not installed (it is the Debian package redis-server; `make redis-server` installs it): %v", err)
	}
	port := freePort(t)
	s := &server{t: t, port: port, args: append([]string{"--port", strconv.Itoa(port),
		"--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", t.TempDir(), "--loglevel", "warning",
	}, extra...)}
	s.start()
	t.Cleanup(s.stop)
	return s
}

// start starts the process and waits (at most 10 s) until it answers a
// PING.
func (s *server) start() {
	s.t.Helper()
	s.cmd = exec.Command("redis-server", s.args...)
	require.NoError(s.t, s.cmd.Start())
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", s.addr(), 100*time.Millisecond)
		if err == nil {
			// INFO server answers with the process id: the server on the
			// port must be this test's, not another process's.
			_, _ = c.Write([]byte("INFO server\r\n"))
			buf := make([]byte, 8192)
			_ = c.SetReadDeadline(time.Now().Add(time.Second))
			n, _ := io.ReadAtLeast(c, buf, 1)
			_ = c.Close()
			if n > 0 {
				if want := fmt.Sprintf("process_id:%d\r\n", s.cmd.Process.Pid); !strings.Contains(string(buf[:n]), want) && strings.Contains(string(buf[:n]), "process_id:") {
					s.t.Fatalf("port %d answers for another redis-server than this test's (pid %d)", s.port, s.cmd.Process.Pid)
				}
				return
			}
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("redis-server on %s did not start within 10 s: %v", s.addr(), err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stop kills the server, as a crash would, and waits for it: its port
// refuses connections from then on.
func (s *server) stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGCONT) // in case a test froze it
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.cmd = nil
}

// freeze and thaw stop and resume the process: a hung Redis, which
// accepts connections (the kernel does) but answers nothing.
func (s *server) freeze() { require.NoError(s.t, s.cmd.Process.Signal(syscall.SIGSTOP)) }
func (s *server) thaw()   { require.NoError(s.t, s.cmd.Process.Signal(syscall.SIGCONT)) }

func (s *server) addr() string { return fmt.Sprintf("127.0.0.1:%d", s.port) }

// plain returns a client of the server without the hook (for the test's
// own commands, and the baseline), closed at the end of the test.
func (s *server) plain(t testing.TB, opts ...func(*redis.Options)) *redis.Client {
	o := &redis.Options{Addr: s.addr(), DialTimeout: time.Second,
		ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second,
		ContextTimeoutEnabled: true, MaxRetries: -1, PoolSize: 8}
	for _, f := range opts {
		f(o)
	}
	c := redis.NewClient(o)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// hooked returns a client of the server with a fuseredis hook on g.
func (s *server) hooked(t testing.TB, g *executor.Group, opts ...func(*redis.Options)) *redis.Client {
	c := s.plain(t, opts...)
	c.AddHook(fuseredis.New(g, c.Options().Addr))
	return c
}

// testGroup is the group of the fault tests: 4 slots a node, stuck after
// 0.5 s (half the invocation timeout), a reset timeout of 1.5 s. It
// records every transition.
func testGroup(t testing.TB, tweak ...func(*executor.Config)) (*executor.Group, *fuseboxtest.Recorder) {
	rec := &fuseboxtest.Recorder{}
	cfg := executor.Config{
		Slots:             4,
		InvocationTimeout: time.Second,
		Breaker:           breaker.Config{ResetTimeout: 1500 * time.Millisecond},
	}
	for _, f := range tweak {
		f(&cfg)
	}
	g, err := executor.NewGroup(executor.GroupConfig{Default: cfg, OnTransition: rec.Listen})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, g.Close(ctx))
	})
	return g, rec
}

// firstTransition returns the first transition of the supplier name to
// state to among events, if any.
func firstTransition(events []breaker.Event, name string, to breaker.State) (breaker.Event, bool) {
	for _, e := range events {
		if e.Name == name && e.To == to {
			return e, true
		}
	}
	return breaker.Event{}, false
}

// transitionsOf returns the transitions of the supplier name among events.
func transitionsOf(events []breaker.Event, name string) []breaker.Event {
	var out []breaker.Event
	for _, e := range events {
		if e.Name == name {
			out = append(out, e)
		}
	}
	return out
}

// eventually waits, polling every 5 ms, until cond holds; it fails the
// test after limit. Real Redis runs on real time, so these tests cannot
// use a synctest bubble; every wait is bounded, and generous.
func eventually(t testing.TB, limit time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > limit {
			t.Fatalf("%s: not after %v", what, limit)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Since(start)
}

// stats returns the executor stats of the supplier name.
func stats(t testing.TB, g *executor.Group, name string) executor.Stats {
	ex, ok := g.Lookup(name)
	require.True(t, ok, "no executor for %s", name)
	return ex.Stats()
}

// inUse is the number of connections of c's pool that are taken.
func inUse(c *redis.Client) int {
	s := c.PoolStats()
	return int(s.TotalConns) - int(s.IdleConns)
}
