package browsertest

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/breaker"
	"github.com/fusebox-go/fusebox/dashboard"
	"github.com/fusebox-go/fusebox/executor"
)

// A supplier in shadow mode shows its shadow breaker's state, a "shadow"
// badge, and what enforce mode would have refused; an enforcing one shows
// neither.
func TestPageShowsShadowMode(t *testing.T) {
	shadow, err := executor.New("payments", executor.Config{Shadow: true, Breaker: breaker.Config{ResetTimeout: time.Hour}})
	require.NoError(t, err)
	defer shadow.Close(context.Background())
	enforcing, err := executor.New("search", executor.Config{})
	require.NoError(t, err)
	defer enforcing.Close(context.Background())
	shadow.Breaker().Trip(breaker.Manual)
	for range 2 {
		_, err := executor.Do(context.Background(), shadow, func(context.Context) (int, error) { return 1, nil })
		require.NoError(t, err)
	}
	dash, err := dashboard.New(dashboard.Options{Interval: 100 * time.Millisecond})
	require.NoError(t, err)
	dash.Add(shadow)
	dash.Add(enforcing)
	srv := httptest.NewServer(dash)
	defer srv.Close()
	defer dash.Close(context.Background())

	ctx := browser(t)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/")))
	waitState(ctx, t, "payments", "open", 10*time.Second)
	waitState(ctx, t, "search", "closed", 5*time.Second)
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`(() => {
		const p = document.getElementById("s-payments"), s = document.getElementById("s-search");
		return [String(p.querySelector(".badge.shadow").hidden), p.querySelector(".line.would").textContent,
			p.querySelector(".line.probe").textContent, String(s.querySelector(".badge.shadow").hidden),
			String(s.querySelector(".line.would").hidden)];
	})()`))
	require.NoError(t, err)
	require.Equal(t, []string{"false", "shadow: nothing refused; enforce would have refused 2 (open 2)",
		"shadow breaker open: calls still go through", "true", "true"}, got)

	// Without Options.AllowControl the control buttons are not shown (the
	// server would refuse them anyway).
	display, err := chromedp.Run(ctx, chromedp.Evaluate[string](
		`getComputedStyle(document.querySelector("#s-payments .actions")).display`))
	require.NoError(t, err)
	require.Equal(t, "none", display)
}
