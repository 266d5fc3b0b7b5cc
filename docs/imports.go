//go:build pages

// The modules the pages' code imports, so that go mod tidy keeps them in
// go.mod: the pages themselves are Markdown, which tidy does not read.
package main

import (
	_ "github.com/fusebox-go/fusebox/breaker"
	_ "github.com/fusebox-go/fusebox/dashboard"
	_ "github.com/fusebox-go/fusebox/executor"
	_ "github.com/fusebox-go/fusebox/fleet"
	_ "github.com/fusebox-go/fusebox/fuseboxtest"
	_ "github.com/fusebox-go/fusebox/fusegrpc"
	_ "github.com/fusebox-go/fusebox/fusehttp"
	_ "github.com/fusebox-go/fusebox/fusehttp/inbound"
	_ "github.com/fusebox-go/fusebox/fuseredis"
	_ "github.com/fusebox-go/fusebox/fusesql"
	_ "github.com/fusebox-go/fusebox/metrics"
	_ "github.com/fusebox-go/fusebox/policy"
	_ "github.com/fusebox-go/fusebox/priority"
	_ "github.com/fusebox-go/fusebox/readiness"
	_ "github.com/gin-gonic/gin"
	_ "github.com/go-chi/chi/v5"
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "github.com/labstack/echo/v4"
	_ "github.com/prometheus/client_golang/prometheus/promhttp"
	_ "github.com/redis/go-redis/v9"
	_ "google.golang.org/grpc"
	_ "google.golang.org/grpc/health/grpc_health_v1"
)
