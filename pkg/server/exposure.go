package server

import (
	"fmt"
	"net"
	"strings"

	"github.com/toolnexus/toolnexus/internal/config"
)

// listenerAddrs are the addresses of the three listeners: the bound ones
// once Listen has run, else the configured ones ("" = off).
type listenerAddrs struct {
	grpc, mcp, metrics, web string
}

// configured are the addresses cfg asks for; the MCP gateway only when it
// is on (a reload cannot turn it on: listeners need a restart).
func configuredAddrs(cfg *config.Config) listenerAddrs {
	return listenerAddrs{grpc: cfg.Server.Listen, mcp: cfg.Server.MCP.Listen, metrics: cfg.Server.MetricsListen, web: cfg.Server.Web.Listen}
}

// boundAddrs are the addresses the sockets actually hold. A reload checks
// these, not the new config's listen keys: those change nothing until a
// restart, while the socket stays where it is. Before Listen (an embedder
// serving GRPC() on its own listener) the configured addresses stand in.
func (s *Server) boundAddrs(cfg *config.Config) listenerAddrs {
	a := configuredAddrs(cfg)
	if s.lis != nil {
		a.grpc = s.lis.Addr().String()
	}
	if s.metricsLis != nil {
		a.metrics = s.metricsLis.Addr().String()
	}
	if s.mcpLis != nil {
		a.mcp = s.mcpLis.Addr().String()
	}
	if s.mcp == nil {
		a.mcp = ""
	}
	if s.web != nil && s.web.Addr() != nil {
		a.web = s.web.Addr().String()
	}
	return a
}

// checkExposure is the rule for a listener on a non-loopback address: the
// gRPC and /mcp listeners run tools — shell commands included — so they need
// a credential: bearer tokens (auth.tokens), identity-provider JWTs
// (auth.oidc) or mutual TLS (server.tls.clientCA). TLS
// without a client CA encrypts but lets anyone in, so it does not count.
// /metrics and /healthz are read-only and may be public; the startup line
// names them. --insecure skips the rule.
func checkExposure(cfg *config.Config, addrs listenerAddrs, insecure bool) error {
	if insecure {
		return nil
	}
	if err := checkWebExposure(cfg, addrs.web); err != nil {
		return err
	}
	if cfg.Auth.Enabled() || mutualTLS(cfg) {
		return nil
	}
	for _, l := range []struct{ addr, key string }{{addrs.grpc, "server.listen"}, {addrs.mcp, "server.mcp.listen"}} {
		if l.addr == "" || isLoopback(l.addr) {
			continue
		}
		why := "none of auth.tokens, auth.oidc or mutual TLS is configured"
		if cfg.Server.TLS.Enabled() {
			why = "server.tls without clientCA encrypts but does not authenticate, and neither auth.tokens nor auth.oidc is set"
		}
		return &config.Error{Key: l.key, Msg: fmt.Sprintf("%s is not a loopback address and %s, so anyone who reaches it runs tools; "+
			"configure auth.tokens, auth.oidc or server.tls.clientCA (mutual TLS), listen on 127.0.0.1, or pass --insecure if you really mean it", l.addr, why)}
	}
	return nil
}

// checkWebExposure is the rule for the web listener beyond loopback: it
// runs no tool, but a login's callback carries an authorization code, so
// browsers must reach it over TLS — server.tls on the listener itself, or
// an https server.web.publicUrl whose proxy terminates TLS.
func checkWebExposure(cfg *config.Config, addr string) error {
	if addr == "" || isLoopback(addr) || cfg.Server.TLS.Enabled() || strings.HasPrefix(cfg.Server.Web.PublicURL, "https://") {
		return nil
	}
	return &config.Error{Key: "server.web.listen", Msg: fmt.Sprintf("%s is not a loopback address and neither server.tls nor an https server.web.publicUrl is set, so logins' authorization codes would cross the network in clear; "+
		"configure server.tls, set server.web.publicUrl to the https URL of the TLS proxy in front, listen on 127.0.0.1, or pass --insecure if you really mean it", addr)}
}

func mutualTLS(cfg *config.Config) bool {
	return cfg.Server.TLS.Enabled() && cfg.Server.TLS.ClientCA != ""
}

// exposed describes the listeners reachable beyond loopback and what
// guards each, for the startup line ("" when everything is on loopback).
func exposed(cfg *config.Config, addrs listenerAddrs) string {
	guard := "open (--insecure)"
	switch {
	case cfg.Auth.Enabled() && mutualTLS(cfg):
		guard = "tokens + mTLS"
	case cfg.Auth.Enabled():
		guard = "tokens"
	case mutualTLS(cfg):
		guard = "mTLS"
	}
	var parts []string
	if addrs.grpc != "" && !isLoopback(addrs.grpc) {
		parts = append(parts, "grpc "+addrs.grpc+" ("+guard+")")
	}
	if addrs.mcp != "" && !isLoopback(addrs.mcp) {
		parts = append(parts, "mcp "+addrs.mcp+" ("+guard+")")
	}
	if addrs.web != "" && !isLoopback(addrs.web) {
		parts = append(parts, "web "+addrs.web+" (logins' callbacks)")
	}
	if addrs.metrics != "" && !isLoopback(addrs.metrics) {
		parts = append(parts, "metrics "+addrs.metrics+" (open: /metrics and /healthz are public, read-only)")
	}
	return strings.Join(parts, ", ")
}

func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// exposedNow is exposed for the bound listeners, or "none".
func (s *Server) exposedNow() string {
	cfg := s.core.Config()
	if e := exposed(cfg, s.boundAddrs(cfg)); e != "" {
		return e
	}
	return "none"
}
