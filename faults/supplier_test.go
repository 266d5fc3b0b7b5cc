package faults_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// bigBody is the size of the response to /big: 64 KiB, four seconds
// through a 16 KB/s bandwidth toxic.
const bigBody = 64 << 10

// supplier answers every request at once: "ok", or 64 KiB for /big. hits
// counts the requests that reached it.
type supplier struct {
	hits atomic.Int64
	hit  changes
}

func (s *supplier) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.hits.Add(1)
	s.hit.notify()
	if r.URL.Path == "/big" {
		w.Header().Set("Content-Length", fmt.Sprint(bigBody))
		w.Write(make([]byte, bigBody))
		return
	}
	io.WriteString(w, "ok")
}

// newSupplier starts a supplier in the test process, on 127.0.0.1.
func newSupplier(t *testing.T) (*supplier, string) {
	t.Helper()
	s := &supplier{}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, srv.Listener.Addr().String()
}

const childEnv = "FAULTS_SUPPLIER"

// serveChild is the supplier process: it serves on 127.0.0.1, writes its
// address to stdout, and exits when stdin closes (the test ended, or died).
func serveChild() int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(ln.Addr())
	go http.Serve(ln, &supplier{})
	io.Copy(io.Discard, os.Stdin)
	return 0
}

// child is a supplier in a process of its own, which the test can stop and
// resume.
type child struct {
	cmd  *exec.Cmd
	addr string
}

// startChild runs the test binary again as the supplier process.
func startChild(t *testing.T) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGCONT) // a stopped process cannot read its stdin closing
		stdin.Close()
		cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err, "the supplier process wrote no address")
	return &child{cmd: cmd, addr: strings.TrimSpace(line)}
}

func (c *child) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	require.NoError(t, c.cmd.Process.Signal(sig))
}
