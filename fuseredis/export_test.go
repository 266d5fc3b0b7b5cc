package fuseredis

// WaitDialVerdicts waits until h has recorded every failed dial it has
// seen so far: their verdicts are reached on goroutines of their own.
func WaitDialVerdicts(h *Hook) { h.verdicts.Wait() }
