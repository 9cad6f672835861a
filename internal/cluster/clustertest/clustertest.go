// Package clustertest connects tests to a real redis-server as a replica
// does (internal/cluster).
package clustertest

import (
	"fmt"
	"log/slog"
	"testing"

	"github.com/toolnexus/toolnexus/internal/cluster"
	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/testutil"
)

// Client is one replica's control-plane client on srv, its keys under
// prefix ("" = the deployment named test), closed with the test.
func Client(t testing.TB, srv *testutil.RedisServer, prefix string) *cluster.Client {
	t.Helper()
	// A deployment's keys need a name or a prefix of their own.
	extra, name := "", `"name": "test", `
	if prefix != "" {
		extra, name = fmt.Sprintf(`, "keyPrefix": %q`, prefix), ""
	}
	cfg, err := config.Parse([]byte(`{"cluster": {`+name+`"redis": {"url": "`+srv.URL+`", "timeout": 2000`+extra+`}}}`), "", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c, err := cluster.New(*cfg.Cluster.Redis, cluster.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
