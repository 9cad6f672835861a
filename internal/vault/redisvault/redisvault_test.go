package redisvault_test

import (
	"fmt"
	"io"
	"log/slog"
	"testing"

	"go.uber.org/goleak"

	"github.com/toolnexus/toolnexus/internal/cluster"
	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/internal/vault"
	"github.com/toolnexus/toolnexus/internal/vault/redisvault"
	"github.com/toolnexus/toolnexus/internal/vault/vaulttest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// client is one replica's connection to srv.
func client(t *testing.T, srv *testutil.RedisServer, prefix string) *cluster.Client {
	t.Helper()
	cfg, err := config.Parse([]byte(`{"cluster": {"redis": {"url": "`+srv.URL+`", "timeout": 2000, "keyPrefix": "`+prefix+`"}}}`), "", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c, err := cluster.New(*cfg.Cluster.Redis, cluster.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Two replicas' backends on one redis-server: what one writes, takes,
// locks or changes, the other sees.
func TestRedisContract(t *testing.T) {
	srv := testutil.StartRedis(t)
	n := 0
	vaulttest.Run(t, func(t *testing.T) (vault.Backend, vault.Backend) {
		n++
		prefix := fmt.Sprintf("t%d:", n) // each subtest starts from an empty store
		a, b := redisvault.New(client(t, srv, prefix)), redisvault.New(client(t, srv, prefix))
		t.Cleanup(func() {
			a.Close()
			b.Close()
		})
		return a, b
	})
	if n == 0 {
		t.Fatal("the contract ran nothing")
	}
}
