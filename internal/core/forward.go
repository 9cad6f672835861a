package core

// With cluster.redis, an answer to a pending request that another replica
// holds (a stdio MCP server's elicitation or sampling, an A2A task's
// input) is forwarded to that replica over the control plane, and the
// result comes back here (internal/suspend/pending/forward.go): the
// cluster.Client is the pending store's Remote.
func (c *Core) serveForwards() {
	if c.cluster == nil {
		return
	}
	if err := c.eng.Pending().SetRemote(c.cluster); err != nil {
		c.log.Warn("cluster: not yet listening for answers forwarded from other replicas; they reach this replica once Redis answers", "error", err)
	}
}
