package compare

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// HungResult is what one library did while its supplier hung: calls
// arrived at a steady rate for Window; the numbers describe [0, Window).
type HungResult struct {
	Lib     string
	Honours bool // the supplier returned when its context ended (else it ignored it)
	Bound   int  // the library's concurrency bound, 0 if none
	Unit    time.Duration

	Calls   int           // calls started in the window
	Reached int           // calls whose function ran (reached the supplier)
	Last    time.Duration // when the last of them reached it
	// FirstFast is when a caller was first refused without calling the
	// supplier (open breaker or full bulkhead/pool), -1 if never.
	FirstFast time.Duration
	// FirstOpen is when a caller first met an open breaker, -1 if never.
	FirstOpen time.Duration

	MaxRunning   int // the most functions running at once: stuck on the supplier
	RunningAtEnd int
	MaxBlocked   int // the most callers waiting for an outcome at once
	BlockedAtEnd int
	// MaxWait is the longest a caller waited, callers still waiting at
	// the end counted up to the end.
	MaxWait  time.Duration
	Outcomes [NumOutcomes]int // of the calls that returned in the window
}

// Hung runs the hung-supplier scenario against lib in the current time
// (real, or virtual inside a testing/synctest bubble): a caller arrives
// every `every` for `window`, each on its own goroutine (a request worker)
// and each calls a supplier that never answers: it waits for its context
// when honours is set, else for the end of the scenario. After the window
// the supplier is released and everything is drained and closed, waiting
// at most drain.
func Hung(lib Lib, s Settings, honours bool, every, window, drain time.Duration) (HungResult, error) {
	sub, err := lib.New(s)
	if err != nil {
		return HungResult{}, err
	}
	res := HungResult{Lib: lib.Name, Honours: honours, Unit: s.Timeout, FirstFast: -1, FirstOpen: -1}
	if lib.Bounded {
		res.Bound = s.Slots
	}
	var (
		start   = time.Now()
		release = make(chan struct{})
		ended   atomic.Bool // the window is over: stop recording
		// over reports whether the window is over. It asks the clock, not
		// only the flag, so that a main goroutine that wakes up late on a
		// busy machine does not stretch the window.
		over = func() bool { return ended.Load() || time.Since(start) >= window }

		mu       sync.Mutex
		running  int
		blocked  int
		startsAt []time.Duration // per caller, when it started
		waited   []time.Duration // per caller, how long it waited; -1 while waiting
	)
	errLate := errors.New("supplier answered after the scenario")
	fn := func(ctx context.Context) (int, error) {
		mu.Lock()
		running++
		if !over() {
			res.Reached++
			res.Last = time.Since(start)
			res.MaxRunning = max(res.MaxRunning, running)
		}
		mu.Unlock()
		defer func() { mu.Lock(); running--; mu.Unlock() }()
		if honours {
			select {
			case <-ctx.Done():
				return 0, ctx.Err()
			case <-release:
			}
		} else {
			<-release
		}
		return 0, errLate
	}

	var wg sync.WaitGroup
	n := int(window / every)
	for i := range n {
		time.Sleep(time.Until(start.Add(time.Duration(i) * every)))
		if time.Since(start) >= window {
			break
		}
		mu.Lock()
		id := len(startsAt)
		startsAt = append(startsAt, time.Since(start))
		waited = append(waited, -1)
		blocked++
		res.MaxBlocked = max(res.MaxBlocked, blocked)
		mu.Unlock()
		wg.Go(func() {
			t0 := time.Now()
			_, err := sub.Call(context.Background(), fn)
			o := sub.Classify(err)
			mu.Lock()
			defer mu.Unlock()
			blocked--
			if over() {
				return
			}
			waited[id] = time.Since(t0)
			res.Outcomes[o]++
			at := time.Since(start)
			if (o == Open || o == Full) && res.FirstFast < 0 {
				res.FirstFast = at
			}
			if o == Open && res.FirstOpen < 0 {
				res.FirstOpen = at
			}
		})
	}
	time.Sleep(time.Until(start.Add(window)))

	mu.Lock()
	ended.Store(true)
	res.Calls = len(startsAt)
	res.RunningAtEnd = running
	res.BlockedAtEnd = blocked
	for i, w := range waited {
		if w < 0 {
			w = window - startsAt[i]
		}
		res.MaxWait = max(res.MaxWait, w)
	}
	mu.Unlock()

	close(release)
	drained := make(chan struct{})
	go func() { wg.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(drain):
		return res, errors.New("compare: callers still blocked after the drain time")
	}
	sub.Close()
	return res, nil
}
