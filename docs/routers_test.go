package docs_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/go-chi/chi/v5"
	"github.com/labstack/echo/v4"

	"github.com/fusebox-go/fusebox/executor"
	"github.com/fusebox-go/fusebox/fusehttp/inbound"
)

// The adapters of routers.md, as the page writes them (its blocks are
// programs, which the page test builds but cannot call): each request
// runs on the executor of its route pattern, a request no route matched
// on none, and a refused request never reaches the handler.

func chiRoute(r *http.Request) string {
	rc := chi.RouteContext(r.Context())
	if rc == nil || rc.RoutePattern() == "" {
		return ""
	}
	return r.Method + " " + rc.RoutePattern()
}

type echoRouteKey struct{}

func echoWithRoute(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if p := c.Path(); p != "" {
			r := c.Request()
			c.SetRequest(r.WithContext(context.WithValue(r.Context(), echoRouteKey{}, r.Method+" "+p)))
		}
		return next(c)
	}
}

func echoRoute(r *http.Request) string {
	s, _ := r.Context().Value(echoRouteKey{}).(string)
	return s
}

type ginKey struct{}

func ginProtect(cfg inbound.Config) gin.HandlerFunc {
	cfg.Key = func(r *http.Request) string {
		c, _ := r.Context().Value(ginKey{}).(*gin.Context)
		if c == nil || c.FullPath() == "" {
			return ""
		}
		return r.Method + " " + c.FullPath()
	}
	h := inbound.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := r.Context().Value(ginKey{}).(*gin.Context)
		c.Request = r
		c.Next()
	}), cfg)
	return func(c *gin.Context) {
		c.Request = c.Request.WithContext(context.WithValue(c.Request.Context(), ginKey{}, c))
		h.ServeHTTP(c.Writer, c.Request)
		c.Abort()
	}
}

// slowRoute is each router's pattern of the route whose one slot a
// blocked request holds.
var slowRoute = map[string]string{"chi": "GET /slow/{x}", "echo": "GET /slow/:x", "gin": "GET /slow/:x"}

func TestTheRouterRecipesKeyByRoute(t *testing.T) {
	tests := []struct {
		router string
		build  func(g *executor.Group, slow http.HandlerFunc) http.Handler
		want   []string // executors made, with their successes
	}{
		{"chi", func(g *executor.Group, slow http.HandlerFunc) http.Handler {
			cfg := inbound.Config{Group: g, Key: chiRoute}
			protect := func(next http.Handler) http.Handler { return inbound.Handler(next, cfg) }
			r := chi.NewRouter()
			r.Group(func(r chi.Router) {
				r.Use(protect)
				r.Get("/search/{q}", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, chi.URLParam(r, "q")) })
				r.Get("/slow/{x}", slow)
			})
			r.Route("/api", func(r chi.Router) {
				r.With(protect).Get("/items/{id}", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, chi.URLParam(r, "id")) })
			})
			return r
		}, []string{"GET /api/items/{id} 1", "GET /search/{q} 2", "GET /slow/{x} 1"}},
		{"echo", func(g *executor.Group, slow http.HandlerFunc) http.Handler {
			cfg := inbound.Config{Group: g, Key: echoRoute}
			e := echo.New()
			e.Use(echoWithRoute, echo.WrapMiddleware(func(next http.Handler) http.Handler { return inbound.Handler(next, cfg) }))
			e.GET("/search/:q", func(c echo.Context) error { return c.String(http.StatusOK, c.Param("q")) })
			e.GET("/api/items/:id", func(c echo.Context) error { return c.String(http.StatusOK, c.Param("id")) })
			e.GET("/slow/:x", echo.WrapHandler(slow))
			return e
		}, []string{"GET /api/items/:id 1", "GET /search/:q 2", "GET /slow/:x 1"}},
		{"gin", func(g *executor.Group, slow http.HandlerFunc) http.Handler {
			gin.SetMode(gin.ReleaseMode)
			r := gin.New()
			r.Use(gin.Recovery(), ginProtect(inbound.Config{Group: g}))
			r.GET("/search/:q", func(c *gin.Context) { c.String(http.StatusOK, c.Param("q")) })
			r.GET("/api/items/:id", func(c *gin.Context) { c.String(http.StatusOK, c.Param("id")) })
			r.GET("/slow/:x", gin.WrapF(slow))
			return r
		}, []string{"GET /api/items/:id 1", "GET /search/:q 2", "GET /slow/:x 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.router, func(t *testing.T) {
			g, err := executor.NewGroup(executor.GroupConfig{
				Suppliers: map[string]executor.Config{slowRoute[tt.router]: {Slots: 1}},
			})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close(context.Background())
			entered, release := make(chan struct{}), make(chan struct{})
			slowCalls := 0
			h := tt.build(g, func(w http.ResponseWriter, r *http.Request) {
				slowCalls++
				close(entered)
				<-release
			})
			get := func(path string) int {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
				return rec.Code
			}
			for _, path := range []string{"/search/a", "/search/b", "/api/items/7"} {
				if code := get(path); code != http.StatusOK {
					t.Errorf("GET %s: %d, want 200", path, code)
				}
			}
			if code := get("/nope"); code != http.StatusNotFound {
				t.Errorf("GET /nope: %d, want the router's 404", code)
			}
			done := make(chan int)
			go func() { done <- get("/slow/1") }()
			<-entered
			if code := get("/slow/2"); code != http.StatusServiceUnavailable {
				t.Errorf("GET /slow/2 while /slow/1 holds the route's one slot: %d, want 503", code)
			}
			close(release)
			if code := <-done; code != http.StatusOK {
				t.Errorf("GET /slow/1: %d, want 200", code)
			}
			if slowCalls != 1 {
				t.Errorf("the slow handler ran %d times, want once: a refused request must not reach it", slowCalls)
			}
			var got []string
			for _, name := range g.Names() {
				if ex, ok := g.Lookup(name); ok {
					got = append(got, fmt.Sprintf("%s %d", name, ex.Stats().Successes))
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("executors and their successes: got %q, want %q", got, tt.want)
			}
		})
	}
}
