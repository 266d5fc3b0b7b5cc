package browsertest

import (
	"context"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/dashboard"
	"github.com/fusebox-go/fusebox/executor"
)

// A tile's fleet section, handed a fleet view (here in the JSON shape of
// fleet.View), is fetched only once it is opened, and shows every
// replica's state, who probes next and the fleet-wide override.
func TestPageShowsTheFleet(t *testing.T) {
	ex, err := executor.New("payments", executor.Config{})
	require.NoError(t, err)
	defer ex.Close(context.Background())
	var calls atomic.Int64
	view := func(_ context.Context, supplier string) (any, error) {
		calls.Add(1)
		return map[string]any{
			"supplier": supplier,
			"replicas": []map[string]any{
				{"replica": "r0", "state": "open", "reason": "saturation", "for_ns": 2e9, "probe_in_ns": 3e9},
				{"replica": "r1", "state": "forced-open", "reason": "manual", "for_ns": 1e9},
			},
			"prober": "r0", "prober_left_ns": 4e9,
			"override": map[string]any{"Action": "force-open", "Reason": "INC-1", "Replica": "r1", "Seq": 7},
		}, nil
	}
	dash, err := dashboard.New(dashboard.Options{Interval: 100 * time.Millisecond, FleetView: view})
	require.NoError(t, err)
	dash.Add(ex)
	srv := httptest.NewServer(dash)
	defer srv.Close()
	defer dash.Close(context.Background())

	ctx := browser(t)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/")))
	waitState(ctx, t, "payments", "closed", 10*time.Second)
	waitFor(ctx, t, 5*time.Second, "the fleet section offered", func() (bool, string) {
		v := number(ctx, t, `document.querySelector("#s-payments details.fleet").hidden ? 0 : 1`)
		return v == 1, "hidden"
	})
	assert.Zero(t, calls.Load(), "nothing is fetched while the section is closed")
	_, err = chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { document.querySelector("#s-payments details.fleet summary").click(); return true; })()`))
	require.NoError(t, err, "opening the fleet section")
	var got []string
	waitFor(ctx, t, 5*time.Second, "the fleet drawn", func() (bool, string) {
		var err error
		got, err = chromedp.Run(ctx, chromedp.Evaluate[[]string](`(() => {
			const f = document.querySelector("#s-payments details.fleet");
			const rows = [...f.querySelectorAll("tr")].slice(1).map((r) => r.textContent);
			const p = f.querySelector(".fleet-prober"), o = f.querySelector(".fleet-override");
			return rows.concat([p ? p.textContent : "", o ? o.textContent : ""]);
		})()`))
		require.NoError(t, err)
		return len(got) == 4, "it shows " + joined(got)
	})
	assert.Contains(t, got[0], "r0")
	assert.Contains(t, got[0], "open")
	assert.Contains(t, got[1], "r1")
	assert.Contains(t, got[1], "forced-open")
	assert.Equal(t, "probes next: r0 (its lease has 4 s left)", got[2])
	assert.Equal(t, "fleet-wide force-open by r1: INC-1 (#7)", got[3])
	assert.Positive(t, calls.Load(), "opened: fetched")
}

func joined(s []string) string {
	out := ""
	for _, x := range s {
		out += "[" + x + "]"
	}
	return out
}
