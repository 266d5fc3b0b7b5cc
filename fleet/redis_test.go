package fleet_test

import (
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/internal/testport"
)

// server is a redis-server process of a test, on 127.0.0.1 on a free port,
// without persistence: a restart forgets every key, as a failover to an
// empty replica would.
type server struct {
	t    *testing.T
	bin  string // redis-server, or redis-sentinel
	port int
	args []string
	cmd  *exec.Cmd
	tls  bool // the port speaks TLS only: ready once it accepts
}

// startRedis starts redis-server. A machine without it fails the test with
// instructions: these tests run in CI, they are never skipped.
func startRedis(t *testing.T, extra ...string) *server {
	t.Helper()
	return startRedisOn(t, false, extra...)
}

// startRedisOn starts redis-server; with tls, the free port is its TLS
// port (extra must name the certificates) and it has no plain port.
func startRedisOn(t *testing.T, tls bool, extra ...string) *server {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatalf("redis-server is not installed (it is the Debian package redis-server; `make redis-server` installs it): %v", err)
	}
	port := freePort(t)
	ports := []string{"--port", strconv.Itoa(port)}
	if tls {
		ports = []string{"--port", "0", "--tls-port", strconv.Itoa(port)}
	}
	s := &server{t: t, bin: "redis-server", port: port, tls: tls, args: append(append(ports,
		"--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", t.TempDir(), "--loglevel", "warning",
	), extra...)}
	s.start()
	t.Cleanup(s.stop)
	return s
}

func (s *server) start() {
	s.t.Helper()
	s.cmd = exec.Command(s.bin, s.args...)
	require.NoError(s.t, s.cmd.Start())
	// Ready once it answers a PING (bounded: 5 s).
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", s.addr(), 100*time.Millisecond)
		if err == nil && s.tls {
			_ = c.Close()
			return
		}
		if err == nil {
			_, _ = c.Write([]byte("PING\r\n"))
			buf := make([]byte, 64)
			_ = c.SetReadDeadline(time.Now().Add(time.Second))
			n, _ := c.Read(buf)
			_ = c.Close()
			if n > 0 {
				return
			}
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s on %s did not start within 5 s: %v", s.bin, s.addr(), err)
		}
		<-time.After(10 * time.Millisecond)
	}
}

// stop kills the server, as a crash would, and waits for it.
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
// accepts connections but answers nothing.
func (s *server) freeze() { require.NoError(s.t, s.cmd.Process.Signal(syscall.SIGSTOP)) }
func (s *server) thaw()   { require.NoError(s.t, s.cmd.Process.Signal(syscall.SIGCONT)) }

func (s *server) addr() string { return fmt.Sprintf("127.0.0.1:%d", s.port) }

// client returns a client of the server, closed at the end of the test.
func (s *server) client(t *testing.T, opts ...func(*redis.Options)) *redis.Client {
	o := &redis.Options{Addr: s.addr(), DialTimeout: 200 * time.Millisecond,
		ReadTimeout: opTimeout, WriteTimeout: opTimeout, MaxRetries: -1}
	for _, f := range opts {
		f(o)
	}
	c := redis.NewClient(o)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// patience bounds a wait that ends on its event: it only limits how long
// a failing run takes, so it is far above what the event takes even on a
// loaded, shared machine. Bounds that are part of what a test asserts are
// written where they apply.
const patience = 10 * time.Second

// eventually waits, polling every millisecond, until cond holds; it fails
// the test after limit. Real Redis runs on real time, so these tests
// cannot use a synctest bubble; every wait is bounded.
func eventually(t *testing.T, limit time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Since(start) > limit {
			t.Fatalf("%s: not after %v", what, limit)
		}
		<-tick.C
	}
	return time.Since(start)
}

type redisOptions = redis.Options

// freePort returns a port on 127.0.0.1 that no other test, of this
// process or another test process running beside it, has been given.
func freePort(t *testing.T) int {
	t.Helper()
	port, err := testport.Free()
	require.NoError(t, err)
	return port
}
