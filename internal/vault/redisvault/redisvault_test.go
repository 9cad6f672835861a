package redisvault_test

import (
	"fmt"
	"testing"

	"go.uber.org/goleak"

	"github.com/toolnexus/toolnexus/internal/cluster/clustertest"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/internal/vault"
	"github.com/toolnexus/toolnexus/internal/vault/redisvault"
	"github.com/toolnexus/toolnexus/internal/vault/vaulttest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Two replicas' backends on one redis-server: what one writes, takes,
// locks or changes, the other sees.
func TestRedisContract(t *testing.T) {
	srv := testutil.StartRedis(t)
	n := 0
	vaulttest.Run(t, func(t *testing.T) (vault.Backend, vault.Backend) {
		n++
		prefix := fmt.Sprintf("t%d:", n) // each subtest starts from an empty store
		a, b := redisvault.New(clustertest.Client(t, srv, prefix)), redisvault.New(clustertest.Client(t, srv, prefix))
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
