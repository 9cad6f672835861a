package server

import (
	"context"
	"fmt"
	"reflect"

	"github.com/toolnexus/toolnexus/internal/cluster"
	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/core"
	"github.com/toolnexus/toolnexus/internal/suspend"
	"github.com/toolnexus/toolnexus/internal/suspend/redisstore"
)

// ReplicaReload is one replica's outcome of a reload broadcast over the
// control plane (cluster.redis).
type ReplicaReload struct {
	// Replica is the replica's id (host name, pid, random suffix).
	Replica string
	// Applied reports whether it serves the new config.
	Applied bool
	// Err says why not.
	Err string
	// Revision is its registry revision after the reload.
	Revision uint64
}

// startCluster connects to cluster.redis when the config has it. Redis
// being down does not stop the start: the replica serves on its
// fallbacks and the health service says so only if cluster.redis.required.
func (s *Server) startCluster(cfg *config.Config) error {
	if cfg.Cluster.Redis == nil {
		return nil
	}
	c, err := cluster.New(*cfg.Cluster.Redis, cluster.Options{Logger: s.log, Metrics: s.prom,
		OnHealth: func(bool) { s.publishHealth() }})
	if err != nil {
		return err
	}
	s.cluster = c
	if s.suspended, err = redisstore.New(c); err != nil {
		s.log.Warn("cluster: a call waiting here on an approval learns another replica's decision at its next look (2 s) until Redis answers", "error", err)
	}
	if !c.Up() {
		s.log.Warn("cluster: Redis does not answer yet; serving on the fallbacks until it does", "redis", cfg.Cluster.Redis.String())
	}
	return nil
}

// sharedSuspended is the store of suspended calls the replicas share, or
// nil (the core keeps them in memory). A typed nil must not reach the
// core's interface.
func (s *Server) sharedSuspended() suspend.Store {
	if s.suspended == nil {
		return nil
	}
	return s.suspended
}

// serveClusterReloads makes this replica apply the reloads other
// replicas broadcast.
func (s *Server) serveClusterReloads() {
	if s.cluster == nil {
		return
	}
	err := s.cluster.ServeReloads(func(ctx context.Context) (uint64, error) {
		rep, err := s.reload(ctx, "cluster")
		if err != nil {
			return 0, publicError(err)
		}
		return rep.Revision, nil
	})
	if err != nil {
		s.log.Warn("cluster: not yet listening for reloads other replicas broadcast; this replica hears them once Redis answers", "error", err)
	}
}

// broadcastReload asks the other replicas to reload after this one did,
// and adds their answers to rep.
func (s *Server) broadcastReload(ctx context.Context, rep core.Report) core.Report {
	if s.cluster == nil {
		return rep
	}
	others, err := s.cluster.BroadcastReload(ctx, 0)
	rep.Replicas = append([]cluster.ReplicaReload{{Replica: s.cluster.Replica(), Applied: true, Revision: rep.Revision}}, others...)
	rep.ReplicasErr = err
	applied := 0
	for _, r := range rep.Replicas {
		if r.Applied {
			applied++
		} else {
			s.log.Warn("reload: a replica did not apply it", "replica", r.Replica, "error", r.Error)
		}
	}
	if err != nil {
		s.log.Warn("reload: applied here only; the other replicas could not be asked", "error", err)
	}
	s.log.Info(fmt.Sprintf("reload: %d of %d replicas applied it", applied, len(rep.Replicas)))
	return rep
}

func replicaReloads(rs []cluster.ReplicaReload) []ReplicaReload {
	var out []ReplicaReload
	for _, r := range rs {
		out = append(out, ReplicaReload{Replica: r.Replica, Applied: r.Applied, Err: r.Error, Revision: r.Revision})
	}
	return out
}

// clusterHealthy is false only while Redis is down and the operator asked
// to be taken out of the balancer for that (cluster.redis.required).
func (s *Server) clusterHealthy() bool {
	return s.cluster == nil || !s.cluster.Required() || s.cluster.Up()
}

// healthy is what the health service and /healthz report.
func (s *Server) healthy() bool { return s.serving.Load() && s.clusterHealthy() }

// clusterChanged names cluster.redis when a reload changed it: the
// connection is made once, at start.
func clusterChanged(old, next *config.Config) []string {
	if reflect.DeepEqual(old.Cluster, next.Cluster) {
		return nil
	}
	return []string{"cluster.redis"}
}

// closeCluster ends the control-plane connection, last.
func (s *Server) closeCluster() {
	if s.cluster == nil {
		return
	}
	s.suspended.Close()
	if err := s.cluster.Close(); err != nil {
		s.log.Warn("closing the cluster connection", "error", err)
	}
}

// mcpStateKey is the key that signs /mcp's requestState: the file's
// (server.mcp.stateKeyFile) when set, else with cluster.redis one made
// once and shared by every replica of the deployment through Redis, else
// a random key of this process (mcpgateway makes it) — which a stateless
// /mcp behind several replicas cannot use, so the start says so.
func (s *Server) mcpStateKey(cfg *config.Config, fromFile []byte) []byte {
	if fromFile != nil {
		return fromFile
	}
	if s.cluster != nil {
		key, err := s.cluster.SharedSecret(context.Background(), "mcp-state-key", config.MinStateKeyBytes)
		if err == nil {
			return key
		}
		s.log.Warn("server.mcp.stateKeyFile is unset and the key could not be shared through Redis: until a restart with Redis up, a 2026-07-28 client's retry of a suspended call is refused on any replica but the one that suspended it", "error", err)
		return nil
	}
	if w := mcpStateKeyFinding(cfg); w != "" {
		s.log.Warn(w)
	}
	return nil
}

// mcpStateKeyFinding warns of a stateless /mcp (server.mcp.stateless, or
// sessions.shared) whose requestState key each replica makes for itself.
func mcpStateKeyFinding(cfg *config.Config) string {
	if cfg.Server.MCP.Listen == "" || !cfg.MCPStateless() || cfg.Server.MCP.StateKeyFile != "" || cfg.Cluster.Redis != nil {
		return ""
	}
	return "server.mcp.stateKeyFile is unset and /mcp is stateless (any replica answers any request) without cluster.redis: each replica signs requestState with a key of its own, so a 2026-07-28 client's retry of a suspended call is refused on any replica but the one that suspended it; give every replica the same key file, or set cluster.redis to share one"
}

// clusterSummary is --check's line on what the replicas share.
func clusterSummary(cfg *config.Config) string {
	r := cfg.Cluster.Redis
	if r == nil {
		return "replicas: one (approvals, pending calls and rate limits in this process's memory; set cluster.redis to share them)"
	}
	key := "the key file (server.mcp.stateKeyFile)"
	if cfg.Server.MCP.StateKeyFile == "" {
		key = "a key made once in Redis"
	}
	line := fmt.Sprintf("replicas: shared through %s, keys under %q (from %s)", r, r.KeyPrefix, r.KeyPrefixFrom)
	if cfg.Server.MCP.Listen != "" {
		line += "; /mcp requestState signed with " + key
	}
	return line
}
