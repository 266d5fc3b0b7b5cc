package loadtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// server is an HTTP server on a loopback port chosen by the system.
type server struct {
	srv    *http.Server
	url    string
	cancel context.CancelFunc // ends the contexts of the requests in flight
	served chan error
}

// startServer serves h on 127.0.0.1 (port 0) until close.
func startServer(h http.Handler) (*server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("loadtest: listen on loopback: %w", err)
	}
	base, cancel := context.WithCancel(context.Background())
	s := &server{
		srv: &http.Server{
			Handler:           h,
			ReadHeaderTimeout: 10 * time.Second,
			BaseContext:       func(net.Listener) context.Context { return base },
		},
		url:    "http://" + ln.Addr().String(),
		cancel: cancel,
		served: make(chan error, 1),
	}
	go func() { s.served <- s.srv.Serve(ln) }()
	return s, nil
}

// close ends the requests still in flight (a hung supplier call returns
// then), shuts the server down and waits for its goroutine.
func (s *server) close() error {
	s.cancel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if err != nil {
		err = errors.Join(err, s.srv.Close())
	}
	if serr := <-s.served; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

// overHTTP serves h on loopback and returns its URL and a client for it;
// done closes both.
func overHTTP(h http.Handler) (url string, client *http.Client, done func(), err error) {
	srv, err := startServer(h)
	if err != nil {
		return "", nil, nil, err
	}
	client = newClient()
	return srv.url, client, func() {
		client.CloseIdleConnections()
		_ = srv.close() // only a handler that outlived the shutdown timeout fails it
		client.CloseIdleConnections()
	}, nil
}

// newClient returns an HTTP client for loopback servers: no proxy, enough
// idle connections for every request in flight.
func newClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConns:        4096,
		MaxIdleConnsPerHost: 4096,
		IdleConnTimeout:     30 * time.Second,
		DisableCompression:  true,
	}}
}

// drain reads the rest of a body and closes it, so the connection can be
// reused.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
}

// shopClient is the load generator's side of an HTTP shop.
type shopClient struct {
	client *http.Client
	url    string
	bound  time.Duration // wall-time bound on one request
}

// send makes one request of kind k and returns the outcome the shop
// reported.
func (c *shopClient) send(ctx context.Context, k kind) outcome {
	rctx, cancel := context.WithTimeout(ctx, c.bound)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, c.url+k.path(), nil)
	if err != nil {
		return outError
	}
	resp, err := c.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return outCancelled
		}
		return outError
	}
	drain(resp)
	return parseOutcome(resp.Header.Get("X-Outcome"))
}
