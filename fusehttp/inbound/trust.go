package inbound

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/priority"
)

// TrustedPriority returns a middleware that sets a request's priority
// (priority.With) from its header, "" meaning priority.Header, when trust
// says the request may choose one. From a request trust refuses the
// header is removed and the priority left as it was, so a client cannot
// raise its own; a trusted request with an unknown value, or with the
// header twice, is answered 400. trust runs only for requests that carry
// the header; if it panics, the request is answered 500 (logged to
// slog.Default()). Put it outside Handler, which reads the priority when
// it takes the slot. A nil trust or next is logged and answered 500.
func TrustedPriority(header string, trust func(*http.Request) bool) func(http.Handler) http.Handler {
	if header == "" {
		header = priority.Header
	}
	header = http.CanonicalHeaderKey(header)
	return func(next http.Handler) http.Handler {
		if trust == nil || next == nil {
			slog.Default().LogAttrs(context.Background(), slog.LevelError,
				"inbound: TrustedPriority needs a trust predicate and a handler")
			return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { internalError(w) })
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			vals := r.Header[header]
			if len(vals) == 0 {
				next.ServeHTTP(w, r)
				return
			}
			ok, err := breaker.Guard("inbound.TrustedPriority trust", func() (bool, error) { return trust(r), nil }, nil)
			switch {
			case err != nil:
				slog.Default().LogAttrs(r.Context(), slog.LevelError, "inbound: request answered 500",
					slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.String("error", err.Error()))
				internalError(w)
				return
			case !ok:
				delete(r.Header, header) // nor read nor passed on further in
				next.ServeHTTP(w, r)
				return
			}
			p, err := priority.Parse(vals[0])
			if err != nil || len(vals) > 1 {
				http.Error(w, "bad "+header+" header", http.StatusBadRequest)
				return
			}
			next.ServeHTTP(w, r.WithContext(priority.With(r.Context(), p)))
		})
	}
}

// PeerIn returns a trust predicate for TrustedPriority that trusts the
// requests whose peer address (Request.RemoteAddr, an IPv4-mapped IPv6
// address as its IPv4 one) is in one of prefixes; an invalid prefix
// matches nothing. Behind a proxy the peer is the proxy: trust it only if
// it removes the header from the requests it forwards.
func PeerIn(prefixes ...netip.Prefix) func(*http.Request) bool {
	prefixes = append([]netip.Prefix(nil), prefixes...)
	return func(r *http.Request) bool {
		ap, err := netip.ParseAddrPort(r.RemoteAddr)
		if err != nil {
			return false
		}
		a := ap.Addr().Unmap()
		for _, p := range prefixes {
			if p.IsValid() && p.Contains(a) {
				return true
			}
		}
		return false
	}
}
