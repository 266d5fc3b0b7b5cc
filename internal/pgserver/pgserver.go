// Package pgserver runs a throwaway PostgreSQL server for the tests and
// demos of fusesql and fusepgx: initdb into a temporary directory, postgres on
// 127.0.0.1 and a free port, and, when the process runs as root (as CI
// does), as the unprivileged user postgres, since PostgreSQL refuses root.
// A test can stop (SIGSTOP), resume and kill the whole server: the
// postmaster and every process it forked (backends call setsid, so they
// are found by their parent, not by process group).
package pgserver

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fusebox-go/fusebox/internal/testport"
)

// Server is one running PostgreSQL.
type Server struct {
	Port int
	dir  string // owned by the server's user; data/ and the log inside
	bin  string
	cred *syscall.Credential // nil when not running as root
	cmd  *exec.Cmd
	exit chan error // postgres's exit, once
}

// Bin finds the directory of initdb and postgres: PG_BIN, else the newest
// /usr/lib/postgresql/<version>/bin, else the PATH.
func Bin() (string, error) {
	if b := os.Getenv("PG_BIN"); b != "" {
		return b, nil
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Slice(found, func(i, j int) bool { return version(found[i]) > version(found[j]) })
	if len(found) > 0 {
		return filepath.Dir(found[0]), nil
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errors.New("pgserver: PostgreSQL not found (no /usr/lib/postgresql/*/bin/initdb, none on the PATH): run make postgresql")
}

func version(initdb string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return v
}

// Start initialises a database cluster in a new temporary directory and
// starts a server on 127.0.0.1 and a free port, user postgres, no
// password (trust), database postgres. Stop ends it and removes the
// directory.
func Start() (*Server, error) {
	bin, err := Bin()
	if err != nil {
		return nil, err
	}
	s := &Server{bin: bin}
	if s.dir, err = os.MkdirTemp("", "fusebox-pg-"); err != nil {
		return nil, err
	}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			os.RemoveAll(s.dir)
			return nil, fmt.Errorf("pgserver: running as root needs the user postgres (the Debian package makes it): %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(s.dir, uid, gid); err != nil {
			os.RemoveAll(s.dir)
			return nil, err
		}
	}
	init := s.command("initdb", "-D", s.data(), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions")
	if out, err := init.CombinedOutput(); err != nil {
		os.RemoveAll(s.dir)
		return nil, fmt.Errorf("pgserver: initdb: %v\n%s", err, out)
	}
	if s.Port, err = freePort(); err != nil {
		os.RemoveAll(s.dir)
		return nil, err
	}
	if err := s.Restart(); err != nil {
		os.RemoveAll(s.dir)
		return nil, err
	}
	return s, nil
}

func (s *Server) data() string { return filepath.Join(s.dir, "data") }

func (s *Server) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(s.bin, name), args...)
	cmd.Dir = s.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	return cmd
}

// Restart starts the server again after Kill (or for the first time), on
// the same port and data, and waits until it accepts connections.
func (s *Server) Restart() error {
	logf, err := os.OpenFile(filepath.Join(s.dir, "log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o666)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := s.command("postgres", "-D", s.data(), "-p", strconv.Itoa(s.Port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=",
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=200", "-c", "shared_buffers=32MB",
		// A backend whose client has gone (a driver closes a connection
		// whose call timed out) ends within 100 ms instead of waiting on,
		// for a lock say, until it next writes to the socket.
		"-c", "client_connection_check_interval=100ms")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pgserver: postgres: %w", err)
	}
	s.cmd, s.exit = cmd, make(chan error, 1)
	go func() { s.exit <- cmd.Wait() }()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-s.exit:
			s.exit <- err
			log, _ := os.ReadFile(filepath.Join(s.dir, "log"))
			return fmt.Errorf("pgserver: postgres exited: %v\n%s", err, log)
		case <-time.After(50 * time.Millisecond):
		}
		if s.ready() {
			return nil
		}
	}
	s.Kill()
	return errors.New("pgserver: postgres did not accept connections within 60 s")
}

// ready reports whether the server answers a startup message (and not
// "the database system is starting up").
func (s *Server) ready() bool {
	cmd := exec.Command(filepath.Join(s.bin, "pg_isready"), "-q", "-h", "127.0.0.1", "-U", "postgres", "-p", strconv.Itoa(s.Port), "-t", "2")
	return cmd.Run() == nil
}

// DSN is the connection string of the server's database postgres.
func (s *Server) DSN() string {
	return fmt.Sprintf("host=127.0.0.1 port=%d user=postgres dbname=postgres sslmode=disable", s.Port)
}

// Pause stops every process of the server (SIGSTOP), the postmaster
// first so that it forks no more: connections stay open and new ones are
// accepted by the kernel, but nothing answers.
func (s *Server) Pause() error {
	if err := s.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		return err
	}
	for _, pid := range s.children() {
		syscall.Kill(pid, syscall.SIGSTOP)
	}
	return nil
}

// Resume continues a paused server (SIGCONT), the postmaster last.
func (s *Server) Resume() error {
	for _, pid := range s.children() {
		syscall.Kill(pid, syscall.SIGCONT)
	}
	return s.cmd.Process.Signal(syscall.SIGCONT)
}

// children returns the processes the postmaster forked.
func (s *Server) children() []int {
	parent := strconv.Itoa(s.cmd.Process.Pid)
	dirs, _ := os.ReadDir("/proc")
	var pids []int
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read after ")".
		i := strings.LastIndexByte(string(stat), ')')
		if f := strings.Fields(string(stat[i+1:])); i > 0 && len(f) > 1 && f[1] == parent {
			pids = append(pids, pid)
		}
	}
	return pids
}

// Kill kills every process of the server (SIGKILL) and waits for them to
// exit: connections break, new ones are refused.
func (s *Server) Kill() {
	children := s.children()
	s.cmd.Process.Signal(syscall.SIGKILL)
	for _, pid := range children {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	err := <-s.exit
	s.exit <- err
	for range 250 {
		alive := false
		for _, pid := range children {
			if syscall.Kill(pid, 0) == nil && !zombie(pid) {
				alive = true
			}
		}
		if !alive {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// zombie reports whether pid has exited but not been reaped.
func zombie(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(stat), ')')
	f := strings.Fields(string(stat[i+1:]))
	return i < 0 || len(f) == 0 || f[0] == "Z"
}

// Stop shuts the server down (fast shutdown) and removes its directory.
func (s *Server) Stop() {
	if s.cmd != nil {
		s.Resume()
		s.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-s.exit:
		case <-time.After(30 * time.Second):
			s.Kill()
		}
	}
	os.RemoveAll(s.dir)
}

// freePort returns a port on 127.0.0.1 that no other caller, of this
// process or another one beside it (the tests of other modules), holds.
func freePort() (int, error) { return testport.Free() }
