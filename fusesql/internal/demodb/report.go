package main

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// during sums a series over the lock's buckets.
func (r *result) during(c []atomic.Int64) int64 {
	var n int64
	for i := r.lockFrom; i < r.lockTo && i < len(c); i++ {
		n += c[i].Load()
	}
	return n
}

func (r *result) maxDuring(c []atomic.Int64) int64 {
	var m int64
	for i := r.lockFrom; i < r.lockTo && i < len(c); i++ {
		m = max(m, c[i].Load())
	}
	return m
}

func (r *result) readP99() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.readLatencies) == 0 {
		return 0
	}
	l := slices.Clone(r.readLatencies)
	slices.Sort(l)
	return l[len(l)*99/100]
}

func (r *result) servedShare() (ok, all int64) {
	ok = r.during(r.s.readsOK)
	return ok, ok + r.during(r.s.readsFailed)
}

func (r *result) print() {
	ok, all := r.servedShare()
	fmt.Printf("  during the lock: catalog served %d of %d (%.0f %%), p99 %v; at most %d connections held by locked writes; writes refused %d, failed %d\n",
		ok, all, pct(ok, all), r.readP99().Round(time.Millisecond), r.maxDuring(r.s.lockWaiters),
		r.during(r.s.writesRefused), r.during(r.s.writesFailed))
}

func pct(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

func secs(d time.Duration) string {
	if d < 0 {
		return "never"
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

// markdown is the table of demo-db.md.
func markdown(rs []*result, f flags) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Orders locked for %v; %d catalog reads/s (%v deadline) and %d order writes/s (%v deadline) over one pool of %d connections.\n\n",
		f.lock, readRate, readTimeout, writeRate, writeTimeout, poolSize)
	b.WriteString("| during the lock | " + strings.Join(names(rs), " | ") + " |\n|---|" + strings.Repeat("---|", len(rs)) + "\n")
	row := func(label string, cell func(r *result) string) {
		b.WriteString("| " + label)
		for _, r := range rs {
			b.WriteString(" | " + cell(r))
		}
		b.WriteString(" |\n")
	}
	row("catalog reads served", func(r *result) string {
		ok, all := r.servedShare()
		return fmt.Sprintf("%.0f %% (%d of %d)", pct(ok, all), ok, all)
	})
	row("catalog read p99 (served)", func(r *result) string { return r.readP99().Round(time.Millisecond).String() })
	row("connections held by the locked writes (max)", func(r *result) string {
		return fmt.Sprintf("%d of %d", r.maxDuring(r.s.lockWaiters), poolSize)
	})
	row("pool connections in use (max)", func(r *result) string {
		return fmt.Sprintf("%d of %d", r.maxDuring(r.s.inUse), poolSize)
	})
	row("order writes refused at once", func(r *result) string { return fmt.Sprint(r.during(r.s.writesRefused)) })
	row("order writes that waited out their deadline", func(r *result) string { return fmt.Sprint(r.during(r.s.writesFailed)) })
	row("orders breaker open after the lock began", func(r *result) string {
		if r.name == "plain database/sql" {
			return "no breaker"
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		return secs(r.opened)
	})
	row("orders breaker closed after the lock ended", func(r *result) string {
		if r.name == "plain database/sql" {
			return "no breaker"
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		return secs(r.closed)
	})
	return b.String()
}

func names(rs []*result) []string {
	var n []string
	for _, r := range rs {
		n = append(n, r.name)
	}
	return n
}

// chart draws, per mode, the catalog reads served per 100 ms (green) and
// the connections held by locked writes (red), the lock shaded.
func chart(rs []*result, f flags) string {
	const w, ph, left, top, gap = 760, 170, 50, 50, 40
	h := top + len(rs)*(ph+gap)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", w, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", w, h)
	fmt.Fprintf(&b, `<text x="%d" y="16">Orders table locked for %v (shaded); one pool of %d connections</text>`+"\n", left, f.lock, poolSize)
	fmt.Fprintf(&b, `<text x="%d" y="32"><tspan fill="#2ca02c">catalog reads served per 100 ms (%d/s offered)</tspan>, <tspan fill="#d62728">connections held by locked order writes</tspan></text>`+"\n", left, readRate)
	perBucket := float64(readRate) * bucket.Seconds()
	ymax := max(perBucket, poolSize) * 1.5
	for p, r := range rs {
		y0 := top + p*(ph+gap) + 16
		plotW := float64(w - left - 20)
		x := func(i int) float64 { return float64(left) + plotW*float64(i)/float64(r.buckets) }
		y := func(v float64) float64 { return float64(y0+ph) - float64(ph)*v/ymax }
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-weight="bold">%s</text>`+"\n", left, y0-4, r.name)
		fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="#eeeeee"/>`+"\n", x(r.lockFrom), y0, x(r.lockTo)-x(r.lockFrom), ph)
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", left, y0+ph, w-20, y0+ph)
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", left, y0, left, y0+ph)
		for _, v := range slices.Compact([]float64{0, min(poolSize, perBucket), max(poolSize, perBucket)}) {
			fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%.0f</text>`+"\n", left-5, y(v)+4, v)
		}
		for s := 0; s*10 <= r.buckets; s += 5 {
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%ds</text>`+"\n", x(s*10), y0+ph+14, s)
		}
		line := func(c []atomic.Int64, color string) {
			var pts []string
			for i := range len(c) - 1 { // the last bucket is partial
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(i), y(min(float64(c[i].Load()), ymax))))
			}
			fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`+"\n", color, strings.Join(pts, " "))
		}
		line(r.s.readsOK, "#2ca02c")
		line(r.s.lockWaiters, "#d62728")
	}
	b.WriteString("</svg>\n")
	return b.String()
}
