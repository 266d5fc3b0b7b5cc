package browsertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
)

// chromium returns the path of the browser, failing the test with what to
// do when it is missing: this test must run in CI, never skip.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "/usr/bin/chromium"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("chromium not found: the dashboard's browser test needs it. " +
		"Run `make chromium` (apt-get update && apt-get install -y chromium) or set CHROMIUM to the browser's path.")
	return ""
}

// browser starts a headless Chromium and returns a tab's context. The
// browser and its goroutines are gone when the test ends.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.Headless,
		chromedp.NoSandbox, // CI runs as root
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
	})
	// The first call starts the browser, which lives as long as ctx (a
	// timeout on this call would stop it).
	require.NoError(t, chromedp.Do(ctx), "starting chromium")
	return ctx
}

// stateOf reads the state a tile shows: the data-state attribute and the
// badge's text, which must agree ("" while the tile is missing).
func stateOf(ctx context.Context, t *testing.T, id string) string {
	t.Helper()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`(() => {
		const el = document.getElementById(`+"`s-"+id+"`"+`);
		if (!el) return ["", ""];
		return [el.dataset.state, el.querySelector(".badge").textContent];
	})()`))
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.Equal(t, got[0], got[1], "the tile's colour and its text name the same state")
	return got[0]
}

// waitFor polls cond every 50 ms until it holds, failing the test after
// limit with what it waited for and the last thing cond said.
func waitFor(ctx context.Context, t *testing.T, limit time.Duration, what string, cond func() (bool, string)) time.Time {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(limit)
	for {
		ok, last := cond()
		if ok {
			return time.Now()
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("still waiting after %v for %s: %s", limit, what, last)
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		}
	}
}

// waitState waits until the page shows the tile of id as want and
// returns when it did.
func waitState(ctx context.Context, t *testing.T, id, want string, limit time.Duration) time.Time {
	t.Helper()
	return waitFor(ctx, t, limit, "the page to show "+id+" "+want, func() (bool, string) {
		got := stateOf(ctx, t, id)
		return got == want, "it shows " + got
	})
}

// number evaluates a JavaScript expression that yields a number.
func number(ctx context.Context, t *testing.T, expr string) float64 {
	t.Helper()
	n, err := chromedp.Run(ctx, chromedp.Evaluate[float64](expr))
	require.NoError(t, err)
	return n
}

// eventOf waits for the first transition of supplier's breaker to state
// at or after since, and returns it.
func eventOf(ctx context.Context, t *testing.T, s *service, supplier string, to breaker.State, since time.Time, limit time.Duration) breaker.Event {
	t.Helper()
	var e breaker.Event
	waitFor(ctx, t, limit, supplier+"'s breaker to turn "+to.String(), func() (bool, string) {
		var ok bool
		e, ok = s.transition(supplier, to, since)
		return ok, "no such transition yet"
	})
	return e
}

// outDir is the repository's out/ directory (ignored by git).
func outDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "out"))
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return dir
}

func TestPageShowsAnOutageLive(t *testing.T) {
	s := startService(t)
	defer s.close(t)
	ctx := browser(t)
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()

	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(s.adminURL)))
	waitState(ctx, t, "payments", "closed", 10*time.Second)
	for name := range loads {
		if name != "payments" {
			waitState(ctx, t, name, "closed", 5*time.Second)
		}
	}
	title, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#title")))
	require.NoError(t, err)
	require.Equal(t, "shop", title)

	// Each tile is an anchor target that links to itself.
	href, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS("#s-search h2 a"), "href"))
	require.NoError(t, err)
	require.Equal(t, "#s-search", href.Value)
	target, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.hash = "#s-search"; document.querySelector(":target").dataset.id`))
	require.NoError(t, err)
	require.Equal(t, "search", target)
	number(ctx, t, `location.hash = ""; window.scrollTo(0, 0); 0`) // back to the top, no tile targeted
	// Healthy traffic until the sparklines have some history.
	waitFor(ctx, t, 20*time.Second, "ten points in the calls sparkline", func() (bool, string) {
		n := number(ctx, t, `document.querySelector("#s-payments .spark polyline").getAttribute("points").split(" ").length`)
		return n >= 10, fmt.Sprint(n, " points")
	})

	// The outage: payments hangs, its 6 slots fill with stuck calls, and
	// a call that finds no free slot trips the breaker. (A slow moment of
	// the machine may have tripped it during the warm-up already: the
	// outage starts from a closed breaker.)
	waitState(ctx, t, "payments", "closed", 25*time.Second)
	hung := time.Now()
	s.sup.hang()
	trip := eventOf(ctx, t, s, "payments", breaker.Open, hung, 10*time.Second)
	shown := waitState(ctx, t, "payments", "open", 5*time.Second)
	t.Logf("tripped (%s) at %s; the page showed it %v later", trip.Reason, trip.Time.Format("15:04:05.000"), shown.Sub(trip.Time))
	require.Less(t, shown.Sub(trip.Time), 2*time.Second, "the tile turns open within 2 s of the trip")

	order, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
		`[...document.querySelectorAll("#tiles .tile")].map(e => e.dataset.id)`))
	require.NoError(t, err)
	require.Equal(t, "payments", order[0], "trouble first")

	// Let the refusals show in the sparkline, then take the picture.
	waitFor(ctx, t, 10*time.Second, "a few points of refusals", func() (bool, string) {
		n := number(ctx, t, `(() => {
			const p = document.querySelector("#s-payments .spark:nth-of-type(2) polyline.s-open").getAttribute("points").split(" ");
			return p.filter(xy => parseFloat(xy.split(",")[1]) < 28).length;
		})()`)
		return n >= 4, fmt.Sprint(n, " points above zero")
	})
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	shot := filepath.Join(outDir(t), "dashboard.png")
	require.NoError(t, os.WriteFile(shot, png, 0o644))
	t.Logf("screenshot during the outage: %s", shot)

	// The filter box narrows the tiles; clearing it shows them all again.
	type tileState struct{ ID, State string }
	filter := func(q string) []tileState {
		number(ctx, t, `(() => { const f = document.getElementById("filter"); f.value = ""; f.dispatchEvent(new Event("input")); return 0; })()`)
		if q != "" {
			require.NoError(t, chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("#filter"), q)))
		}
		tiles, err := chromedp.Run(ctx, chromedp.Evaluate[[]tileState](
			`[...document.querySelectorAll("#tiles .tile:not([hidden])")].map(e => ({ID: e.dataset.id, State: e.dataset.state}))`))
		require.NoError(t, err)
		return tiles
	}
	require.Equal(t, []tileState{{"payments", "open"}}, filter("paym"))
	require.Contains(t, filter("stuck calls"), tileState{"payments", "open"}, "the filter matches the reason's text")
	for _, tile := range filter("closed") {
		require.Equal(t, "closed", tile.State, tile.ID)
	}
	require.Len(t, filter(""), len(loads))

	// On a phone the tiles stack in one column and nothing scrolls sideways.
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile)))
	overflow := number(ctx, t, `document.documentElement.scrollWidth - window.innerWidth`)
	require.LessOrEqual(t, overflow, 0.0, "the page is wider than a phone's screen")
	columns := number(ctx, t, `new Set([...document.querySelectorAll("#tiles .tile")].map(e => e.offsetLeft)).size`)
	require.Equal(t, 1.0, columns)
	png, err = chromedp.Run(ctx, chromedp.CaptureScreenshot())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(outDir(t), "dashboard-phone.png"), png, 0o644))
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateReset()))

	// Recovery: the next probe after the reset timeout succeeds.
	healed := time.Now()
	s.sup.recover()
	closed := eventOf(ctx, t, s, "payments", breaker.Closed, healed, 15*time.Second)
	shown = waitState(ctx, t, "payments", "closed", 5*time.Second)
	t.Logf("closed (%s) at %s; the page showed it %v later", closed.Reason, closed.Time.Format("15:04:05.000"), shown.Sub(closed.Time))
	require.Less(t, shown.Sub(closed.Time), 2*time.Second, "the tile turns closed within 2 s of recovery")

	// An operator forces search open through the page, after confirming.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#s-search button[data-action="force-open"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#confirm`)),
		chromedp.Click(chromedp.CSS(`#confirm-ok`)),
	))
	waitState(ctx, t, "search", "forced-open", 5*time.Second)
	ex, err := s.group.Executor("search")
	require.NoError(t, err)
	require.Equal(t, breaker.ForcedOpen, ex.Breaker().State())

	// Cancelling the confirmation does nothing; confirming a reset closes it.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#s-search button[data-action="reset"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#confirm`)),
		chromedp.Click(chromedp.CSS(`#confirm-cancel`)),
		chromedp.WaitNotVisible(chromedp.CSS(`#confirm`)),
	))
	require.Equal(t, breaker.ForcedOpen, ex.Breaker().State(), "a cancelled confirmation sends nothing")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#s-search button[data-action="reset"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#confirm`)),
		chromedp.Click(chromedp.CSS(`#confirm-ok`)),
	))
	waitState(ctx, t, "search", "closed", 5*time.Second)

	// The service restarts its admin listener: the page says it lost the
	// stream, reconnects by itself, and shows the new process's data.
	url := s.adminURL
	s.stopAdmin(t)
	conn := func() (bool, string) {
		c, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS("#conn"), "data-conn"))
		require.NoError(t, err)
		return c.Value == "reconnecting", "the page shows " + c.Value
	}
	waitFor(ctx, t, 5*time.Second, "the page to notice the lost stream", conn)
	s.startAdmin(t, strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/fusebox/"), "shop (restarted)")
	waitFor(ctx, t, 10*time.Second, "the page to show the restarted service", func() (bool, string) {
		title, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#title")))
		require.NoError(t, err)
		return title == "shop (restarted)", "the title is " + title
	})
	waitState(ctx, t, "payments", "closed", 5*time.Second)
}
