package fusehttp

import (
	"net/http"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/future"
)

// Submit starts the exchange of req on the executor of its host, as
// RoundTrip would make it, and returns the future of its response at once:
// one slot, held until the response's body is closed (or the invocation
// deadline passes), and the Transport's classification. A refusal is
// Submit's error, as RoundTrip's, with nothing sent and no future made.
// The exchange runs on a goroutine of its own, which ends with the round
// trip. Close the response's body as after RoundTrip. Use future.Wait to
// await futures of different types together.
func (t *Transport) Submit(req *http.Request) (*future.Future[*http.Response], error) {
	key, err := t.key(req)
	var l *executor.Lease
	if err == nil {
		l, err = executor.LeaseIn(req.Context(), t.Group, key)
	}
	if err != nil {
		closeBody(req) // never read: nothing was sent
		return nil, err
	}
	p := new(future.Promise[*http.Response])
	go func() {
		// A Base or Classify that ends this goroutine (runtime.Goexit) has
		// ended the lease already; the future must still resolve.
		_, err := breaker.Guard("fusehttp.Transport.Submit", func() (struct{}, error) {
			resp, err := t.exchange(req, l)
			t.backpressure(key, resp)
			p.Complete(resp, err)
			return struct{}{}, nil
		}, func(perr error) { p.Complete(nil, perr) })
		if err != nil {
			p.Complete(nil, err)
		}
	}()
	return p.Future(), nil
}
