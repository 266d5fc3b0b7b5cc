package main

import (
	"context"
	"os"
	"time"

	"github.com/fusebox-go/fusebox/config"
	"github.com/fusebox-go/fusebox/executor"
)

// watch polls the configuration file at path every interval and, each time
// its modification time changes, reads it with config.Load and puts it in
// force with g.Reconfigure. A file that does not parse or does not validate
// changes nothing: report gets the error and the group keeps running on
// the configuration it has. watch returns when ctx ends.
//
// Polling the modification time needs no dependency and no goroutine but
// this one; it sees a change within one interval. Write the file
// atomically (a new file renamed over the old), so that a poll never reads
// it half written.
func watch(ctx context.Context, g *executor.Group, path string, interval time.Duration, report func(error)) {
	var seen time.Time
	if fi, err := os.Stat(path); err == nil {
		seen = fi.ModTime() // the configuration the group was made from
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		fi, err := os.Stat(path)
		if err != nil {
			report(err)
			continue
		}
		if fi.ModTime().Equal(seen) {
			continue
		}
		seen = fi.ModTime()
		cfg, err := config.Load(path)
		if err == nil {
			err = g.Reconfigure(cfg)
		}
		report(err)
	}
}
