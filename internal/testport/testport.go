// Package testport hands out TCP ports on 127.0.0.1 for the servers tests
// start as processes of their own (redis-server, redis-sentinel,
// PostgreSQL), which must be told a port because they cannot report one
// the kernel chose.
//
// A port the kernel hands out for a listener that is then closed is only
// free for a moment: another test process asking the kernel next may get it
// too, and start its server on it first. So every port Free returns is also
// reserved, for as long as the process lives, by an exclusive lock on a
// file named after it in a directory every process shares. Another process
// (or another call in this one) skips a port whose file is locked. Locks go
// with their process, however it ends, so a killed test run reserves
// nothing. A test that stops its server and starts it again on the same
// port keeps the port.
package testport

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// tries bounds the search: the kernel hands out ports from a range of
// thousands, so a run of locked ones this long means something is wrong.
const tries = 200

// Free returns a port on 127.0.0.1 that nothing listened on a moment ago
// and that no other caller of Free, in this process or another, holds.
func Free() (int, error) {
	mu.Lock()
	defer mu.Unlock()
	dir := filepath.Join(os.TempDir(), "fusebox-test-ports")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return 0, fmt.Errorf("testport: %w", err)
	}
	for range tries {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("testport: %w", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		switch err := reserve(filepath.Join(dir, strconv.Itoa(port))); {
		case err == nil:
			return port, nil
		case errors.Is(err, errTaken):
			continue
		default:
			return 0, fmt.Errorf("testport: port %d: %w", port, err)
		}
	}
	return 0, fmt.Errorf("testport: no free port in %d tries", tries)
}

// mu makes the calls of one process take turns: held is shared.
var mu sync.Mutex

// errTaken: another holder has the port's lock.
var errTaken = errors.New("reserved by another test")
