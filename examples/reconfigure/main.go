// Command reconfigure changes a running Group from its configuration file:
// a watcher polls the file's modification time, reads it with config.Load
// and applies it with Group.Reconfigure. Calls in flight are never dropped
// and breaker states are kept.
//
// The program writes a configuration with 2 slots for "payments", keeps 8
// calls at a time going to it, then rewrites the file with 6 slots (the
// queued calls start at once), then with an invalid setting (refused
// whole; the 6 slots stay), then with 1 slot (the running calls finish, new ones see
// the new size). It runs about two seconds, on no network.
//
//	go run ./examples/reconfigure
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fusebox-go/fusebox/config"
	"github.com/fusebox-go/fusebox/executor"
)

const tmpl = `{
  "default": {"slots": 4, "invocationTimeout": "1s"},
  "suppliers": {
    "payments": {"slots": %s, "queue": 20, "queueTimeout": "2s", "invocationTimeout": "1s",
                 "breaker": {"resetTimeout": "5s"}}
  }
}`

func main() {
	dir, err := os.MkdirTemp("", "fusebox-reconfigure")
	check(err)
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "fusebox.json")
	version := 0
	write := func(workers string) {
		version++
		// Written to a new file and renamed over the old one: the watcher
		// never reads half a file. The explicit modification time makes
		// each version distinct even on a coarse file-system clock.
		tmp := path + ".tmp"
		check(os.WriteFile(tmp, fmt.Appendf(nil, tmpl, workers), 0o600))
		stamp := time.Now().Add(time.Duration(version) * time.Second)
		check(os.Chtimes(tmp, stamp, stamp))
		check(os.Rename(tmp, path))
	}
	write("2")
	cfg, err := config.Load(path)
	check(err)
	g, err := executor.NewGroup(cfg)
	check(err)
	defer g.Close(context.Background())
	payments, _ := g.Lookup("payments")

	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		watch(ctx, g, path, 20*time.Millisecond, func(err error) {
			if err != nil {
				fmt.Println("config refused, nothing changed:", err)
				return
			}
			fmt.Println("config applied")
		})
	})
	// A steady load: 8 callers, each call 50ms.
	for range 8 {
		wg.Go(func() {
			for ctx.Err() == nil {
				_, _ = executor.Do(ctx, payments, func(ctx context.Context) (int, error) {
					select {
					case <-time.After(50 * time.Millisecond):
						return 1, nil
					case <-ctx.Done():
						return 0, ctx.Err()
					}
				})
			}
		})
	}
	show := func(what string) {
		s := payments.Stats()
		fmt.Printf("%-28s slots=%d in_use=%d queued=%d breaker=%s\n", what, s.Slots, s.InUse, s.Queued, s.Breaker.State)
	}
	time.Sleep(300 * time.Millisecond)
	show("2 slots:")
	write("6")
	time.Sleep(300 * time.Millisecond)
	show("6 slots:")
	write("-3")
	time.Sleep(300 * time.Millisecond)
	show("after the invalid file:")
	write("1")
	time.Sleep(300 * time.Millisecond)
	show("1 slot:")
	stop()
	wg.Wait()
	s := payments.Stats()
	fmt.Printf("calls: %d succeeded, %d failed, %d refused\n", s.Successes, s.Failures, refused(s.Rejected))
}

func refused(r executor.Rejections) uint64 {
	return r.Open + r.Saturated + r.QueueFull + r.Busy + r.Closed
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
