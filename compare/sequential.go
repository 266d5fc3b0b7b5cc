package compare

import (
	"context"
	"time"
)

// SequentialResult counts what one sequential caller saw: it awaits each
// call and submits the next at once, through a bulkhead of one slot, to a
// healthy supplier. Every refusal is spurious: the only slot was that
// caller's own, already finished call.
type SequentialResult struct {
	Lib      string
	Calls    int
	Outcomes [NumOutcomes]int
}

// Spurious is the number of refusals.
func (r SequentialResult) Spurious() int { return r.Outcomes[Full] + r.Outcomes[Open] }

// Sequential runs n await-then-resubmit calls through lib with one slot.
func Sequential(lib Lib, n int) (SequentialResult, error) {
	s := Settings{Slots: 1, Timeout: time.Second, Failures: 5, Reset: 2 * time.Second}
	sub, err := lib.New(s)
	if err != nil {
		return SequentialResult{}, err
	}
	defer sub.Close()
	res := SequentialResult{Lib: lib.Name, Calls: n}
	ctx := context.Background()
	for range n {
		_, err := sub.Call(ctx, okCtx)
		res.Outcomes[sub.Classify(err)]++
	}
	return res, nil
}
