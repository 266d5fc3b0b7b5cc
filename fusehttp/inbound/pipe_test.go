package inbound_test

import (
	"context"
	"net"
	"net/http"
	"sync"
	"testing"
)

// pipeServer serves h with a real http.Server over in-memory connections
// (net.Pipe), so that a test runs the server's own body reading and read
// deadlines inside a synctest bubble. It returns a dialer; the server
// closes at the end of the test.
func pipeServer(t *testing.T, h http.Handler) func() net.Conn {
	t.Helper()
	l := &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
	srv := &http.Server{Handler: h}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(l)
	}()
	t.Cleanup(func() {
		srv.Close()
		<-served
	})
	return func() net.Conn {
		c, s := net.Pipe()
		select {
		case l.conns <- s:
		case <-l.done:
			t.Error("dial after the server closed")
		}
		return c
	}
}

// pipeClient is an http.Client whose connections are pipes to a pipeServer.
func pipeClient(t *testing.T, dial func() net.Conn) *http.Client {
	tr := &http.Transport{DialContext: func(context.Context, string, string) (net.Conn, error) { return dial(), nil }}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }
