package core

import (
	"context"
	"errors"
	"fmt"

	"github.com/toolnexus/toolnexus/internal/cluster"
	"github.com/toolnexus/toolnexus/internal/suspend/pending"
)

// With cluster.redis, an answer to a pending request that another replica
// holds (a stdio MCP server's elicitation or sampling, an A2A task's
// input) is forwarded to that replica over the control plane, and the
// result comes back here (internal/suspend/pending/forward.go).
func (c *Core) serveForwards() {
	if c.cluster == nil {
		return
	}
	p := c.eng.Pending()
	p.SetRemote(clusterRemote{c.cluster})
	c.cluster.ServeForwards(p.ServeForwarded)
}

// clusterRemote is the control plane as the pending store's Remote.
type clusterRemote struct{ c *cluster.Client }

func (r clusterRemote) Replica() string { return r.c.Replica() }

func (r clusterRemote) Forward(ctx context.Context, owner string, req []byte) ([]byte, error) {
	b, err := r.c.Forward(ctx, owner, req)
	if errors.Is(err, cluster.ErrReplicaGone) {
		err = fmt.Errorf("%w: %w", pending.ErrOwnerGone, err)
	}
	return b, err
}
