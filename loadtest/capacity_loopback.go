package loadtest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusehttp"
)

// loopbackCaller puts the supplier's side of a call (serve) behind an HTTP
// server on 127.0.0.1 and calls it through a fusehttp.Transport whose
// supplier has cfg: the path of a service's real outbound call. Each call
// runs on a goroutine of its own, as a request handler's would, and
// record is told when it began (by now's clock) and how it ended; a call
// the bulkhead refuses ends at once, with no request sent. closeFn waits
// for every call, which it cancels (a hung one returns at once), then
// closes the group and the server.
func loopbackCaller(ctx context.Context, cfg executor.Config, serve func(context.Context) error,
	now func() time.Duration, record func(time.Duration, error),
) (submit func(), stats func() (int, uint64), closeFn func() error, err error) {
	srv, err := startServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if serve(r.Context()) != nil {
			w.WriteHeader(http.StatusServiceUnavailable) // the caller has gone
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	if err != nil {
		return nil, nil, nil, err
	}
	g, err := executor.NewGroup(executor.GroupConfig{Default: cfg})
	if err != nil {
		return nil, nil, nil, errors.Join(err, srv.close())
	}
	ex, err := g.Executor("capacity")
	if err != nil {
		return nil, nil, nil, errors.Join(err, g.Close(context.Background()), srv.close())
	}
	base := newClient()
	client := &http.Client{Transport: &fusehttp.Transport{
		Group: g, Base: base.Transport,
		Names: map[string]string{strings.TrimPrefix(srv.url, "http://"): "capacity"},
	}}
	// The calls' own context: cancelled at the end, so that what is still
	// in flight ends as the caller's cancellation, which the breaker
	// ignores, rather than as failures of the supplier.
	cctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	submit = func() {
		t0 := now() // the arrival: a late goroutine counts against the call
		wg.Go(func() {
			req, err := http.NewRequestWithContext(cctx, http.MethodGet, srv.url, nil)
			if err == nil {
				var resp *http.Response
				if resp, err = client.Do(req); err == nil {
					drain(resp)
					if resp.StatusCode != http.StatusNoContent {
						err = fmt.Errorf("loadtest: the supplier answered %s", resp.Status)
					}
				}
			}
			record(t0, err)
		})
	}
	stats = func() (int, uint64) { st := ex.Stats(); return st.Slots, st.Rejected.Busy }
	closeFn = func() error {
		cancel() // a call into a hang returns now, not at its timeout
		wg.Wait()
		base.CloseIdleConnections()
		return errors.Join(g.Close(context.Background()), srv.close())
	}
	return submit, stats, closeFn, nil
}
