package server

import (
	"context"
	"crypto/tls"
	"os"
	"strings"
	"time"

	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/core"
	"github.com/toolnexus/toolnexus/internal/every"
)

// Reload re-reads the config and applies it: a config that does not parse
// or validate, or that asks for what only a restart can do, is rejected
// with the reason (a *ConfigError) and the old one keeps serving; otherwise
// only changed sources are rebuilt, and limits, auth and TLS swap.
// ctx carries the caller to the audit log.
func (s *Server) Reload(ctx context.Context) (ReloadReport, error) {
	rep, err := s.reload(ctx, "signal")
	if err != nil {
		return ReloadReport{}, publicError(err)
	}
	rep = s.broadcastReload(ctx, rep)
	return ReloadReport{Revision: rep.Revision, Rebuilt: rep.Started, Removed: rep.Removed, Failed: rep.Failed,
		Replicas: replicaReloads(rep.Replicas), ReplicasErr: rep.ReplicasErr}, nil
}

// reloadForRPC is SourceService.Reload's way in; like SIGHUP (Reload), it
// reaches every replica when they share a control plane.
func (s *Server) reloadForRPC(ctx context.Context) (core.Report, error) {
	rep, err := s.reload(ctx, "rpc")
	if err != nil {
		return rep, err
	}
	return s.broadcastReload(ctx, rep), nil
}

// reload applies the config file anew; trigger ("rpc", "signal", "watch")
// and the caller in ctx go to the audit log.
func (s *Server) reload(ctx context.Context, trigger string) (rep core.Report, err error) {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	defer func() { s.auditReload(ctx, trigger, rep, err) }()
	old := s.core.Config()
	cfg, err := s.loadConfig()
	if err == nil {
		err = checkExposure(cfg, s.boundAddrs(cfg), s.opts.Insecure)
	}
	var tc *tls.Config
	if err == nil {
		tc, err = tlsFromConfig(cfg)
	}
	if err == nil && s.web == nil {
		// An oauth section needs the web listener, which only a start opens.
		bound := *cfg
		bound.Server.Web.Listen = ""
		err = bound.CheckOAuth()
	}
	if err == nil && cfg.Server.TLS.Enabled() != old.Server.TLS.Enabled() {
		err = &config.Error{Key: "server.tls", Msg: "turning TLS on or off needs a restart; certificates can be swapped by reload"}
	}
	if err != nil {
		s.core.RejectApply()
	} else {
		rep, err = s.core.Apply(cfg)
	}
	if err != nil {
		s.log.Error("reload rejected; the previous config keeps serving", "error", err)
		return core.Report{}, err
	}
	for _, key := range append(append(restartOnly(old, cfg), tracingChanged(old, cfg)...), clusterChanged(old, cfg)...) {
		s.log.Warn("config: " + key + " changed; it takes effect after a restart (the rest of the reload is applied)")
	}
	if tc != nil {
		s.tlsConf.Store(tc)
	}
	s.heapFloor.Load().Set(cfg.Server.GCHeapFloor)
	if s.mcp != nil {
		s.mcp.Reconfigure()
	}
	s.refreshReadiness()
	s.log.Info("config reloaded", "rebuilt", len(rep.Started), "removed", len(rep.Removed), "failed", len(rep.Failed), "revision", rep.Revision)
	return rep, nil
}

// restartOnly names the settings that changed between two configs but
// that a reload cannot apply (the listeners, the gRPC message cap and the
// MCP serverInfo are fixed when the server starts), so the operator is not
// left guessing.
func restartOnly(old, next *config.Config) []string {
	var keys []string
	changed := func(key string, a, b any) {
		if a != b {
			keys = append(keys, key)
		}
	}
	changed("server.listen", old.Server.Listen, next.Server.Listen)
	changed("server.metricsListen", old.Server.MetricsListen, next.Server.MetricsListen)
	changed("limits.maxRequestBytes", old.Limits.MaxRequestBytes, next.Limits.MaxRequestBytes)
	changed("server.mcp.listen", old.Server.MCP.Listen, next.Server.MCP.Listen)
	changed("server.mcp.name", old.Server.MCP.Name, next.Server.MCP.Name)
	changed("server.mcp.version", old.Server.MCP.Version, next.Server.MCP.Version)
	changed("sessions.shared", old.Sessions.Shared, next.Sessions.Shared)
	changed("server.mcp.stateless", old.MCPStateless(), next.MCPStateless())
	changed("server.web.listen", old.Server.Web.Listen, next.Server.Web.Listen)
	changed("server.web.publicUrl", old.Server.Web.PublicURL, next.Server.Web.PublicURL)
	changed("credentials", old.Credentials, next.Credentials)
	return keys
}

// watchConfigFile polls the config file's modification time when
// server.watchConfig is on. Polling (every 2 s) keeps the dependency list
// short and works on every filesystem, including ConfigMap symlink swaps.
func (s *Server) watchConfigFile() (stop func()) {
	if s.opts.ConfigPath == "" || !s.core.Config().Server.WatchConfig {
		return func() {}
	}
	last := s.configModTime()
	return every.Start(2*time.Second, func() {
		if m := s.configModTime(); m != last {
			last = m
			_, _ = s.reload(context.Background(), "watch")
		}
	})
}

// configModTime is the modification times of the config file and its
// patches, joined: any of them changing triggers the reload.
func (s *Server) configModTime() string {
	var b strings.Builder
	for _, p := range append([]string{s.opts.ConfigPath}, s.opts.ConfigPatches...) {
		b.WriteString(modTime(p).String())
		b.WriteByte('|')
	}
	return b.String()
}

func modTime(p string) time.Time {
	fi, err := os.Stat(p)
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}
