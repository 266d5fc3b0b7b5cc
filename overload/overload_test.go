package overload

import (
	"context"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/priority"
)

func TestEverySubjectServesAnIdleServer(t *testing.T) {
	Calibrate()
	for _, s := range Subjects {
		t.Run(s, func(t *testing.T) {
			h, release, err := Protect(s, Priorities(&Server{Kind: NoYield}))
			require.NoError(t, err)
			defer release()
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/work", nil))
			assert.Equal(t, http.StatusOK, w.Code)
		})
	}
	_, _, err := Protect("nobody", nil)
	assert.ErrorContains(t, err, "unknown subject")
}

func TestTheProtectionSeesThePriority(t *testing.T) {
	// A shedder refuses by priority: it must see X-Priority decoded before
	// it decides, not only the handler behind it.
	seen := priority.Sheddable
	protect = func(_ string, next http.Handler) (http.Handler, func(), error) {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			seen = priority.From(r.Context())
			next.ServeHTTP(w, r)
		}), func() {}, nil
	}
	defer func() { protect = Protect }()
	h, release, err := Stack("fusebox", &Server{Kind: Slow})
	require.NoError(t, err)
	defer release()
	req := httptest.NewRequest(http.MethodGet, "/work", nil)
	req.Header.Set("X-Priority", "critical")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	assert.Equal(t, http.StatusOK, w.Code)
	assert.Equal(t, priority.Critical, seen, "the priority the protection saw")
}

func TestALoadCountsItsAnswers(t *testing.T) {
	// 200 for even paths, 503 for odd ones, 50 requests in 0.25 s.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "1") {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	c := Client()
	defer c.CloseIdleConnections()
	res := Load{Base: srv.URL, Rate: 200, Dur: 250 * time.Millisecond, Deadline: time.Second,
		Next: func(_ *rand.Rand, i int) Request {
			return Request{Path: "/" + strconv.Itoa(i%2), Class: strconv.Itoa(i % 2)}
		}}.Run(context.Background(), c)
	assert.Equal(t, 50, res.All.Sent)
	assert.Equal(t, 25, res.All.Good)
	assert.Equal(t, 25, res.All.Shed)
	assert.Equal(t, 25, res.ByClass["1"].Shed)
	assert.Positive(t, res.All.P99())
}

func TestTheReportHasEveryTable(t *testing.T) {
	sc := Scenarios()
	cells := []Cell{{Scenario: sc[0].Name, Subject: "fusebox", C: 100,
		Res: Result{All: Tally{Sent: 400, Good: 390, Shed: 10, latencies: []time.Duration{time.Millisecond}}, Dur: 4 * time.Second}}}
	var b strings.Builder
	Report(&b, cells, sc, []string{"fusebox"})
	out := b.String()
	assert.Contains(t, out, "| noyield-0.8 | 97.5 |")
	assert.Contains(t, out, "Refused (503)")
	assert.Contains(t, out, "| noyield-0.8 | 2.5 |")
	assert.Contains(t, out, "| noyield-0.8 | 1 |")
}

func TestTheChartHasABarPerCell(t *testing.T) {
	sc := Scenarios()[:2]
	cells := []Cell{
		{Scenario: sc[0].Name, Subject: "none", C: 100, Res: Result{All: Tally{Good: 400}, Dur: 4 * time.Second}},
		{Scenario: sc[0].Name, Subject: "fusebox", C: 100, Res: Result{All: Tally{Good: 390}, Dur: 4 * time.Second}},
		{Scenario: sc[1].Name, Subject: "fusebox", C: 100, Res: Result{All: Tally{Good: 200}, Dur: 4 * time.Second}},
	}
	var b strings.Builder
	Chart(&b, cells, sc, []string{"none", "fusebox"})
	out := b.String()
	assert.True(t, strings.HasPrefix(out, "<svg"), out)
	assert.Equal(t, 3, strings.Count(out, "<rect x=")-2, "bars (less the legend's two)")
	assert.Contains(t, out, "noyield-0.8 fusebox: 97.5 %")
	assert.Contains(t, out, "noyield-1.5 fusebox: 50.0 %")
	assert.True(t, strings.HasSuffix(out, "</svg>\n"))
}
