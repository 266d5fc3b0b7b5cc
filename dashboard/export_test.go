package dashboard

import (
	"io/fs"
	"time"
)

// StaticFiles returns the embedded page, for tests.
func StaticFiles() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err)
	}
	return sub
}

// SampleAt takes a sample as the sampler does at now, for benchmarks.
func (h *Handler) SampleAt(now time.Time) {
	h.sampleMu.Lock()
	defer h.sampleMu.Unlock()
	h.sampleLocked(now)
}
