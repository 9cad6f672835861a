package redispins_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/catalog"
	"github.com/toolnexus/toolnexus/internal/catalog/pintest"
	"github.com/toolnexus/toolnexus/internal/catalog/redispins"
	"github.com/toolnexus/toolnexus/internal/cluster"
	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/testutil"
)

func client(t *testing.T, srv *testutil.RedisServer, prefix string) *cluster.Client {
	t.Helper()
	cfg, err := config.Parse([]byte(`{"cluster": {"redis": {"url": "`+srv.URL+`", "timeout": 2000, "keyPrefix": "`+prefix+`"}}}`), "", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c, err := cluster.New(*cfg.Cluster.Redis, cluster.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		HealthInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestRedisStoreContract(t *testing.T) {
	srv := testutil.StartRedis(t)
	n := 0
	pintest.Run(t, func(t *testing.T) catalog.Store {
		n++ // a prefix per subtest: one redis-server, empty stores
		return redispins.New(client(t, srv, fmt.Sprintf("t%d:", n)))
	})
}

// Two replicas share the pins: one trusts, the other sees it; one decides,
// the other's second decision is refused.
func TestRedisStoreSharedByReplicas(t *testing.T) {
	srv := testutil.StartRedis(t)
	a, b := redispins.New(client(t, srv, "toolnexus:")), redispins.New(client(t, srv, "toolnexus:"))
	ctx := context.Background()
	if _, err := a.Trust(ctx, "mcp/up", []catalog.Pin{pintest.Def("up_get", "Get.")}); err != nil {
		t.Fatal(err)
	}
	if pins, seen, err := b.Layer(ctx, "mcp/up"); err != nil || !seen || pins["up_get"].Name != "up_get" {
		t.Fatalf("the other replica: %v %v %v", pins, seen, err)
	}
	h := catalog.Held{ID: catalog.HeldID("mcp/up", "up_new", "d"), Source: "mcp/up", Tool: "up_new", Change: catalog.Added,
		New: pintest.Def("up_new", "New."), Status: catalog.Pending, SeenAt: time.Now()}
	if _, err := a.Hold(ctx, h); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Decide(ctx, h.ID, catalog.Decision{Approve: true, By: "ops"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Decide(ctx, h.ID, catalog.Decision{By: "other"}); !errors.Is(err, catalog.ErrDecided) {
		t.Fatalf("a second decision on another replica: %v", err)
	}
	if pins, _, _ := a.Layer(ctx, "mcp/up"); pins["up_new"].By != "ops" {
		t.Fatalf("the approval on one replica pins for all: %+v", pins["up_new"])
	}
}

// Redis away: every operation fails closed with ErrUnavailable, and works
// again once Redis is back.
func TestRedisStoreFailsClosedWhileRedisIsDown(t *testing.T) {
	srv := testutil.StartRedis(t)
	c := client(t, srv, "toolnexus:")
	s := redispins.New(c)
	ctx := context.Background()
	srv.Kill()
	deadline := time.Now().Add(5 * time.Second)
	for c.Up() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if _, _, err := s.Layer(ctx, "mcp/up"); !errors.Is(err, redispins.ErrUnavailable) {
		t.Fatalf("Layer with Redis down: %v", err)
	}
	if _, err := s.Trust(ctx, "mcp/up", []catalog.Pin{pintest.Def("up_get", "Get.")}); !errors.Is(err, redispins.ErrUnavailable) {
		t.Fatalf("Trust with Redis down: %v", err)
	}
	srv.Start()
	for !c.Up() && time.Now().Before(deadline.Add(5*time.Second)) {
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := s.Trust(ctx, "mcp/up", []catalog.Pin{pintest.Def("up_get", "Get.")}); err != nil {
		t.Fatalf("Trust after Redis is back: %v", err)
	}
}
