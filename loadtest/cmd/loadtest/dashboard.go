package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/fusebox-go/fusebox/dashboard"
	"github.com/fusebox-go/fusebox/executor"
)

// liveDashboard serves the fusebox dashboard of the run's executor on a
// loopback address while the scenario runs (-dashboard).
type liveDashboard struct {
	h    *dashboard.Handler
	srv  *http.Server
	url  string
	prev *executor.Executor
}

// startDashboard listens on addr, which must be a loopback address: the
// page offers operator actions and has no authentication.
func startDashboard(addr string) (*liveDashboard, error) {
	host, _, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err != nil || (host != "localhost" && (ip == nil || !ip.IsLoopback())) {
		return nil, usageError{fmt.Errorf("-dashboard must be a loopback address such as 127.0.0.1:8080 "+
			"(the page can trip breakers and has no authentication), got %q", addr)}
	}
	h, err := dashboard.New(dashboard.Options{Title: "loadtest shop", AllowControl: true})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("-dashboard: %w", err)
	}
	d := &liveDashboard{h: h, srv: &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second},
		url: "http://" + ln.Addr().String() + "/"}
	go d.srv.Serve(ln) // ends with Shutdown in stop
	return d, nil
}

// show replaces the executor on the page by ex (one mode's run makes one).
func (d *liveDashboard) show(ex *executor.Executor) {
	if d.prev != nil {
		d.h.Remove(d.prev)
	}
	d.h.Add(ex)
	d.prev = ex
}

// stop ends the page's streams and the server.
func (d *liveDashboard) stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := d.h.Close(ctx)
	if serr := d.srv.Shutdown(ctx); serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

// linger keeps the page up after the run until ctx ends (Ctrl-C).
func (d *liveDashboard) linger(ctx context.Context, stderr io.Writer) {
	fmt.Fprintf(stderr, "dashboard: still serving %s; Ctrl-C to stop\n", d.url)
	<-ctx.Done()
}
