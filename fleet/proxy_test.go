package fleet_test

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// proxy is a TCP proxy on 127.0.0.1 in front of a server: cut closes
// every connection through it and refuses new ones until restore, as a
// network partition between one replica and Redis would.
type proxy struct {
	ln     net.Listener
	target string
	delay  time.Duration // added to every answer from the server
	mu     sync.Mutex
	down   bool
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup
}

func startProxy(t *testing.T, target string) *proxy { return startSlowProxy(t, target, 0) }

// startSlowProxy is a proxy that delays every read from the server by
// delay before passing it on: a round trip as long as across a network.
func startSlowProxy(t *testing.T, target string, delay time.Duration) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &proxy{ln: ln, target: target, delay: delay, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() {
		_ = ln.Close()
		p.cut()
		p.wg.Wait()
	})
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.down {
			p.mu.Unlock()
			_ = c.Close()
			continue
		}
		s, err := net.DialTimeout("tcp", p.target, time.Second)
		if err != nil {
			p.mu.Unlock()
			_ = c.Close()
			continue
		}
		p.conns[c], p.conns[s] = struct{}{}, struct{}{}
		p.wg.Add(2)
		p.mu.Unlock()
		pipe := func(dst, src net.Conn, delay time.Duration) {
			defer p.wg.Done()
			if delay == 0 {
				_, _ = io.Copy(dst, src)
			} else {
				buf := make([]byte, 64<<10)
				for {
					n, err := src.Read(buf)
					if n > 0 {
						time.Sleep(delay)
						if _, werr := dst.Write(buf[:n]); werr != nil {
							break
						}
					}
					if err != nil {
						break
					}
				}
			}
			_ = dst.Close()
			_ = src.Close()
		}
		go pipe(c, s, p.delay)
		go pipe(s, c, 0)
	}
}

func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		_ = c.Close()
	}
	clear(p.conns)
}

func (p *proxy) restore() {
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}

// startReplicaVia starts a replica whose client reaches Redis at addr.
func startReplicaVia(t *testing.T, addr, name string) *replica {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: 200 * time.Millisecond,
		ReadTimeout: opTimeout, WriteTimeout: opTimeout, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	return startReplicaWith(t, c, name)
}
