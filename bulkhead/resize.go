package bulkhead

// Resize changes the sizes of a bulkhead in use, without dropping anything:
//
//   - More slots: the oldest waiters are handed the new slots at once. The
//     executor's waiters are returned, and the caller must start their work
//     as it would for a Waiter returned by Release; blocked Acquire calls
//     are woken here.
//   - Fewer slots: calls in flight keep their slots and end as usual. New
//     admissions see the new size at once, and releases free their slots
//     without handing them to waiters until no more than the new number of
//     slots are in use, so in-flight never exceeds the larger of the two
//     sizes and converges to the new one.
//   - A smaller queue: waiters already queued keep their places; new ones
//     are refused until the queue is below the new size.
//
// cfg is validated whole first, with the same errors as New; an invalid
// cfg changes nothing. Resize is safe for concurrent use with every other
// method.
func (b *Bulkhead) Resize(cfg Config) ([]*Waiter, error) {
	low, err := check(cfg)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	// Under mu: enqueue and the hand-over, which compare with the sizes
	// under mu too, see either the old sizes or the new ones.
	b.setSize(cfg, low)
	var handed []*Waiter
	slots := b.slots.Load()
	for {
		inUse, queued := unpack(b.state.Load())
		if queued == 0 || inUse >= slots {
			// The invariant holds again: no waiter beside a free slot.
			return handed, nil
		}
		// queued > 0: the word changes only under mu, which we hold.
		w := b.head
		b.unlink(w)
		b.state.Add(queuedDec + 1) // queued-1, inUse+1: the new slot goes to w
		if c, ok := w.Value.(wakeup); ok {
			close(c)
			continue
		}
		handed = append(handed, w)
	}
}
