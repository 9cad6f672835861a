package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/toolnexus/toolnexus/internal/mcpgateway"
)

// The MCP gateway's path and the keys of the _meta objects it reads and
// writes, spelled out here; a test pins them to the gateway's own.
const (
	MCPPath      = "/mcp"
	MetaSource   = "toolnexus/source"   // on each listed tool
	MetaOutcome  = "toolnexus/outcome"  // on each call result
	MetaMetadata = "toolnexus/metadata" // on a call result with metadata
	MetaPending  = "toolnexus/pending"  // on a suspended call's result
	MetaAnswer   = "toolnexus/answer"   // in tools/call params, to resume
)

// Listen binds every configured listener: gRPC, metrics, the MCP gateway.
func (s *Server) Listen() error {
	cfg := s.core.Config()
	var bound []net.Listener
	bind := func(addr, keys string) (net.Listener, error) {
		lis, err := net.Listen("tcp", addr)
		if err != nil {
			for _, l := range bound {
				l.Close()
			}
			return nil, fmt.Errorf("listen on %s (%s): %w", addr, keys, err)
		}
		bound = append(bound, lis)
		return lis, nil
	}
	var err error
	if s.lis, err = bind(cfg.Server.Listen, "server.listen / --listen"); err != nil {
		return err
	}
	if cfg.Server.MetricsListen != "" {
		if s.metricsLis, err = bind(cfg.Server.MetricsListen, "server.metricsListen / --metrics-listen"); err != nil {
			return err
		}
	}
	if s.mcp != nil {
		if s.mcpLis, err = bind(cfg.Server.MCP.Listen, "server.mcp.listen / --mcp-listen"); err != nil {
			return err
		}
	}
	if s.web != nil {
		if err := s.web.Listen(); err != nil {
			for _, l := range bound {
				l.Close()
			}
			return err
		}
	}
	// Checked again on what was bound: a host name may resolve elsewhere
	// than its spelling suggests.
	if err := checkExposure(cfg, s.boundAddrs(cfg), s.opts.Insecure); err != nil {
		for _, l := range bound {
			l.Close()
		}
		s.lis, s.metricsLis, s.mcpLis = nil, nil, nil
		s.shutdownWeb()
		return publicError(err)
	}
	return nil
}

// Addr is the bound gRPC address (after Listen).
func (s *Server) Addr() net.Addr { return s.lis.Addr() }

// MetricsAddr is the bound metrics address, or nil when disabled.
func (s *Server) MetricsAddr() net.Addr { return addrOf(s.metricsLis) }

// MCPAddr is the bound MCP gateway address, or nil when the gateway is off.
func (s *Server) MCPAddr() net.Addr { return addrOf(s.mcpLis) }

// MCPHandler is the gateway's handler (serving MCPPath), for mounting it
// on your own HTTP server; nil when server.mcp.listen is not set.
func (s *Server) MCPHandler() http.Handler {
	if s.mcp == nil {
		return nil
	}
	return s.mcp
}

func addrOf(l net.Listener) net.Addr {
	if l == nil {
		return nil
	}
	return l.Addr()
}

func addrString(l net.Listener) string {
	if l == nil {
		return "disabled"
	}
	return l.Addr().String()
}

// MetricsHandler serves /metrics and /healthz.
func (s *Server) MetricsHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(s.prom, promhttp.HandlerOpts{Registry: s.prom, EnableOpenMetrics: true}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		if !s.serving.Load() {
			http.Error(w, "not serving", http.StatusServiceUnavailable)
			return
		}
		if !s.clusterHealthy() {
			http.Error(w, "not serving: Redis (cluster.redis, required) does not answer", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	return mux
}

func (s *Server) serveMetrics(errc chan<- error) {
	if s.metricsLis == nil {
		return
	}
	s.metricsSrv = metricsHTTPServer(s.MetricsHandler())
	go func() {
		if err := s.metricsSrv.Serve(s.metricsLis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errc <- fmt.Errorf("metrics listener: %w", err)
		}
	}()
}

func (s *Server) shutdownMetrics() {
	if s.metricsSrv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = s.metricsSrv.Shutdown(ctx)
		cancel()
	} else if s.metricsLis != nil {
		s.metricsLis.Close()
	}
}

// serveMCP serves the gateway on its listener; TLS when server.tls is set
// (the same certificates as gRPC, swapped on reload).
func (s *Server) serveMCP(errc chan<- error) {
	if s.mcp == nil {
		return
	}
	lis := s.mcpLis
	if s.core.Config().Server.TLS.Enabled() {
		lis = tls.NewListener(lis, s.dynamicTLS())
	}
	mux := http.NewServeMux()
	mux.Handle(MCPPath, s.mcp)
	mux.Handle(MCPPath+"/", s.mcp) // the named views, /mcp/NAME (server.mcp.views)
	mux.Handle(mcpgateway.ResourceMetadataPath, s.mcp.ResourceMetadata())
	mux.Handle(mcpgateway.ResourceMetadataPath+MCPPath, s.mcp.ResourceMetadata())
	s.mcp.SetBaseURL(mcpBaseURL(lis.Addr().String(), s.core.Config().Server.TLS.Enabled()))
	s.mcpSrv = mcpHTTPServer(boundBody(mux, mcpBodyTimeout), s.mcpConns.track)
	go func() {
		if err := s.mcpSrv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			select {
			case errc <- fmt.Errorf("MCP listener: %w", err):
			default:
			}
		}
	}()
}

// shutdownMCP stops the gateway within grace: refuse new requests, let
// calls in flight finish, then close every session and the listener. Calls
// still running when grace is over are cancelled.
func (s *Server) shutdownMCP(parent context.Context, grace time.Duration) {
	if s.mcp == nil {
		return
	}
	ctx, cancel := context.WithTimeout(parent, grace)
	defer cancel()
	srvDone := make(chan struct{})
	if s.mcpSrv != nil {
		go func() {
			_ = s.mcpSrv.Shutdown(ctx)
			close(srvDone)
		}()
	} else {
		if s.mcpLis != nil {
			s.mcpLis.Close()
		}
		close(srvDone)
	}
	if !s.mcp.Drain(ctx) {
		s.log.Warn("MCP gateway: grace period over; cancelling the calls still running", "grace", grace)
	}
	s.mcp.Close()
	s.mcpConns.closeUnused()
	select {
	case <-srvDone:
	case <-ctx.Done():
		_ = s.mcpSrv.Close()
		<-srvDone
	}
}

// connTracker knows each connection's state, so shutdown can close the
// ones that never carried a request. http.Server.Shutdown only counts such a
// connection as idle after 5 s, and HTTP clients leave them behind
// routinely (a connection dialled for a request that an idle one then
// served), which would hold every shutdown for those 5 s.
type connTracker struct {
	mu sync.Mutex
	m  map[net.Conn]http.ConnState
}

func (t *connTracker) track(c net.Conn, st http.ConnState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[net.Conn]http.ConnState{}
	}
	if st == http.StateClosed || st == http.StateHijacked {
		delete(t.m, c)
		return
	}
	t.m[c] = st
}

// closeUnused closes the connections with no request in progress.
func (t *connTracker) closeUnused() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for c, st := range t.m {
		if st == http.StateNew || st == http.StateIdle {
			_ = c.Close()
		}
	}
}

// mcpBaseURL is the MCP listener's own URL, the default OAuth resource's
// origin.
func mcpBaseURL(addr string, tls bool) string {
	if tls {
		return "https://" + addr
	}
	return "http://" + addr
}
