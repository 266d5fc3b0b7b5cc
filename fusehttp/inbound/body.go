package inbound

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"time"
)

// errBodyTooLarge is the error of a body longer than Config.BodyLimit.
var errBodyTooLarge = errors.New("inbound: request body over Config.BodyLimit")

// buffer reads the body of r, at most cfg.BodyLimit bytes within
// cfg.BodyTimeout, and puts it back in r as a reader over memory, so that
// next never waits on the client under a slot. It returns 0, or the status
// to answer instead of serving r: 413 for a body over the limit, 408 for
// one not sent in time, 400 for another read error (the client went).
func (h *handler) buffer(w http.ResponseWriter, r *http.Request) int {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return 0
	}
	limit := h.cfg.BodyLimit
	if r.ContentLength > limit {
		// Declared too long: refuse before reading a byte of it.
		return http.StatusRequestEntityTooLarge
	}
	// The deadline is the connection's (http.ResponseController), so it
	// ends a Read that is blocked on the client, with no timer of ours.
	// A writer that cannot set one (a wrapper without Unwrap, a recorder)
	// leaves the bound to http.Server.ReadTimeout.
	rc := http.NewResponseController(w)
	timed := h.cfg.BodyTimeout > 0 && rc.SetReadDeadline(time.Now().Add(h.cfg.BodyTimeout)) == nil
	b, err := readBody(r.Body, r.ContentLength, limit)
	if timed {
		// The body is read: a deadline left on the connection would end
		// the server's wait for the next request, and with it the
		// request's context, while next runs.
		_ = rc.SetReadDeadline(time.Time{})
	}
	if err != nil {
		var mbe *http.MaxBytesError
		var ne net.Error
		switch {
		case errors.Is(err, errBodyTooLarge), errors.As(err, &mbe):
			return http.StatusRequestEntityTooLarge
		case errors.As(err, &ne) && ne.Timeout():
			return http.StatusRequestTimeout
		}
		return http.StatusBadRequest
	}
	mb := &memBody{}
	mb.Reset(b)
	r.Body = mb
	return 0
}

// memBody is a body read into memory: one allocation with its reader.
type memBody struct{ bytes.Reader }

func (*memBody) Close() error { return nil }

// readBody reads body to its end, at most limit bytes (errBodyTooLarge
// past them), into one buffer sized by the declared length when known.
func readBody(body io.Reader, declared, limit int64) ([]byte, error) {
	size := int64(512)
	if declared > 0 {
		size = declared + 1 // room to see EOF without growing
	}
	b := make([]byte, 0, min(size, limit+1))
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // grow by append's rule
			if int64(cap(b)) > limit+1 {
				b = b[: len(b) : limit+1]
			}
		}
		n, err := body.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if int64(len(b)) > limit {
			return nil, errBodyTooLarge
		}
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
