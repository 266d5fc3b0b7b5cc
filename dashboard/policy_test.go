package dashboard_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fusebox-go/fusebox/dashboard"
	"github.com/fusebox-go/fusebox/policy"
)

func TestTilesShowThePolicies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGroup(t, "quotes", "search")
		h := newHandler(t, dashboard.Options{})
		h.AddGroup(g)
		r, err := policy.NewRetrier(policy.RetryConfig{Backoff: time.Millisecond, Budget: policy.Budget{Ratio: 0.1, Floor: 1}})
		require.NoError(t, err)
		hg, err := policy.NewHedger(policy.HedgeConfig{Delay: 10 * time.Millisecond})
		require.NoError(t, err)
		h.AddPolicies(r, hg)

		quotes, _ := g.Executor("quotes")
		for range 2 { // the floor allows one retry, the budget refuses two
			_, _ = policy.Retry(context.Background(), r, quotes, func(context.Context) (int, error) { return 0, errors.New("502") })
			quotes.Breaker().Reset() // else its failures open it, and the retry is not asked of the budget
		}
		search, _ := g.Executor("search")
		var n atomic.Int32
		_, err = policy.Hedge(context.Background(), hg, search, func(ctx context.Context) (int, error) {
			if n.Add(1) == 1 {
				<-ctx.Done()
				return 0, ctx.Err()
			}
			return 1, nil
		})
		require.NoError(t, err)

		w := do(h, http.MethodGet, "/api/snapshot", "", nil)
		require.Equal(t, http.StatusOK, w.Code)
		var s dashboard.Snapshot
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &s))
		q := tile(t, s, "quotes")
		require.NotNil(t, q.Policy)
		assert.Equal(t, dashboard.Policy{Retries: 1, RetriesRefused: 2}, *q.Policy)
		sr := tile(t, s, "search")
		require.NotNil(t, sr.Policy)
		assert.Equal(t, dashboard.Policy{Hedges: 1, HedgesWon: 1}, *sr.Policy)
		assert.Contains(t, w.Body.String(), `"retries_refused":2`)
	})
	t.Run("without policies the tiles have none", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newHandler(t, dashboard.Options{})
			h.AddGroup(newGroup(t, "quotes"))
			w := do(h, http.MethodGet, "/api/snapshot", "", nil)
			assert.NotContains(t, w.Body.String(), `"policy"`)
		})
	})
}
