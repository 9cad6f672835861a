// Package server serves a toolnexus registry over gRPC: RegistryService and
// SourceService, grpc.health.v1, reflection, Prometheus metrics on a
// separate HTTP listener, hot reload and graceful shutdown.
//
// Most users run cmd/server. To serve your own Go functions next to every
// configured source, build your own binary:
//
//	func main() {
//		greet := tool.Must(tool.Native("greet", func(ctx context.Context, args map[string]any) (any, error) {
//			return "hello", nil
//		}))
//		os.Exit(server.Main(os.Args[1:], greet))
//	}
package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/reflection"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/engine"
	"github.com/toolnexus/toolnexus/internal/executor"
	"github.com/toolnexus/toolnexus/internal/metrics"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// Options configures a Server. Zero values take the config file's settings,
// then the defaults.
type Options struct {
	// ConfigPath is the config file; empty serves the embedded default.
	ConfigPath string
	// Listen and MetricsListen override server.listen / server.metricsListen.
	// MetricsListen "-" disables the metrics listener.
	Listen        string
	MetricsListen string
	// MCPListen overrides server.mcp.listen (the MCP gateway at /mcp);
	// "-" disables the gateway.
	MCPListen string
	// Workspace overrides builtins.workspace.
	Workspace string
	// Insecure allows a non-loopback listener without auth or TLS.
	Insecure bool
	// Debug turns the debug tools on regardless of the config.
	Debug bool
	// Logger receives all logs (slog.Default when nil).
	Logger *slog.Logger
	// Native are your own Go tools, served in layer "native".
	Native []tool.Tool
	// DisableInterceptors serves without the interceptor chain. It exists
	// for `make bench`, which measures what the chain costs; never use it in
	// production (no auth, no panic guard, no metrics).
	DisableInterceptors bool
}

// Server is one toolnexus server.
type Server struct {
	opts Options
	log  *slog.Logger

	reg     *registry.Registry
	eng     *engine.Engine
	exec    *executor.Executor
	protos  protoCache
	prom    *prometheus.Registry
	metrics *metrics.Metrics

	grpcMetrics *grpcprom.ServerMetrics
	grpc        *grpc.Server
	health      *health.Server
	auth        atomic.Pointer[authenticator]
	tlsConf     atomic.Pointer[tls.Config]
	cfg         atomic.Pointer[config.Config]

	reloadMu sync.Mutex
	shutdown chan struct{}
	stopOnce sync.Once

	lis        net.Listener
	metricsLis net.Listener
	metricsSrv *http.Server
	serving    atomic.Bool

	mcp *mcpGateway // nil when server.mcp.listen is not set
}

// New loads the config, starts every source and builds the gRPC server. A
// config problem is a *config.Error (the caller exits 2). Sources that fail
// to start are reported in ListSources; they never stop the server.
func New(opts Options) (*Server, error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	s := &Server{opts: opts, log: log, shutdown: make(chan struct{}), prom: prometheus.NewRegistry()}
	cfg, err := s.loadConfig()
	if err != nil {
		return nil, err
	}
	if err := s.checkExposure(cfg); err != nil {
		return nil, err
	}
	s.cfg.Store(cfg)

	s.prom.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	s.metrics = metrics.New(s.prom)
	s.grpcMetrics = grpcprom.NewServerMetrics(grpcprom.WithServerHandlingTimeHistogram(
		grpcprom.WithHistogramBuckets([]float64{.0005, .001, .005, .01, .05, .1, .5, 1, 5, 30, 120})))
	s.prom.MustRegister(s.grpcMetrics)

	var x *executor.Executor
	s.reg = registry.New(registry.WithLogger(log), registry.OnChange(func(prev, next *registry.Snapshot) {
		if x != nil {
			x.Hook(prev, next)
		}
	}))
	x = executor.New(s.reg, s.metrics, cfg.Limits, log)
	s.exec = x
	s.eng = engine.New(s.reg, engine.Options{Logger: log, Workspace: opts.Workspace, Native: opts.Native})
	metrics.RegisterState(s.prom, s.stateForMetrics)

	if au := newAuthenticator(cfg.Auth); au != nil {
		s.auth.Store(au)
	}
	if err := s.loadTLS(cfg); err != nil {
		return nil, err
	}
	for _, w := range cfg.Warnings {
		log.Warn("config: " + w)
	}
	rep, err := s.eng.Apply(cfg)
	if err != nil {
		return nil, err
	}
	for id, err := range rep.Failed {
		log.Warn("source failed; serving the others", "source", id.String(), "error", err)
	}

	var gopts []grpc.ServerOption
	if !opts.DisableInterceptors {
		gopts = append(gopts, grpc.ChainUnaryInterceptor(s.unaryChain()...), grpc.ChainStreamInterceptor(s.streamChain()...))
	}
	gopts = append(gopts,
		grpc.MaxRecvMsgSize(cfg.Limits.MaxRequestBytes),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 10 * time.Second, PermitWithoutStream: true}),
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: 15 * time.Minute}),
	)
	if cfg.Server.TLS.Enabled() {
		gopts = append(gopts, grpc.Creds(credentials.NewTLS(&tls.Config{
			MinVersion:         tls.VersionTLS12,
			GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) { return s.tlsConf.Load(), nil },
		})))
	}
	s.grpc = grpc.NewServer(gopts...)
	pb.RegisterRegistryServiceServer(s.grpc, &registryService{s: s})
	pb.RegisterSourceServiceServer(s.grpc, &sourceService{s: s})
	s.health = health.NewServer()
	healthpb.RegisterHealthServer(s.grpc, s.health)
	reflection.Register(s.grpc)
	s.grpcMetrics.InitializeMetrics(s.grpc)
	s.mcp = newMCPGateway(s, cfg)
	return s, nil
}

func (s *Server) loadConfig() (*config.Config, error) {
	cfg, err := config.Load(s.opts.ConfigPath)
	if err != nil {
		return nil, err
	}
	if s.opts.Listen != "" {
		cfg.Server.Listen = s.opts.Listen
	}
	switch s.opts.MetricsListen {
	case "":
	case "-":
		cfg.Server.MetricsListen = ""
	default:
		cfg.Server.MetricsListen = s.opts.MetricsListen
	}
	if s.opts.Debug {
		cfg.Debug = true
	}
	switch s.opts.MCPListen {
	case "":
	case "-":
		cfg.Server.MCP.Listen = ""
	default:
		cfg.Server.MCP.Listen = s.opts.MCPListen
	}
	return cfg, nil
}

// checkExposure refuses a non-loopback listener without auth or TLS unless
// --insecure: a tool server reachable from the network runs shell commands.
func (s *Server) checkExposure(cfg *config.Config) error {
	if s.opts.Insecure || cfg.Auth.Enabled() || cfg.Server.TLS.Enabled() {
		return nil
	}
	if !isLoopback(cfg.Server.Listen) {
		return &config.Error{Key: "server.listen", Msg: fmt.Sprintf("%s is not a loopback address and neither auth nor TLS is configured; "+
			"configure auth.tokens or server.tls, or pass --insecure if you really mean it", cfg.Server.Listen)}
	}
	return checkMCPExposure(cfg)
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

func (s *Server) loadTLS(cfg *config.Config) error {
	t := cfg.Server.TLS
	if !t.Enabled() {
		return nil
	}
	tc, err := buildTLS(cfg.Resolve(t.Cert), cfg.Resolve(t.Key), cfg.Resolve(t.ClientCA))
	if err != nil {
		return &config.Error{Key: "server.tls", Msg: err.Error()}
	}
	s.tlsConf.Store(tc)
	return nil
}

// stateForMetrics feeds the scrape-time gauges.
func (s *Server) stateForMetrics() (map[string]int, []metrics.SourceState, uint64) {
	snap := s.reg.Snapshot()
	bySource := map[string]int{}
	for _, e := range snap.Entries() {
		bySource[e.Tool.Source]++
	}
	infos := s.eng.Sources()
	inst := make([]metrics.SourceState, len(infos))
	for i, in := range infos {
		inst[i] = metrics.SourceState{Kind: in.Layer.Kind.String(), Name: in.Layer.Name, Up: in.State == sources.Connected}
	}
	return bySource, inst, snap.Revision()
}

// Registry is the server's registry, e.g. to publish tools from code.
func (s *Server) Registry() *registry.Registry { return s.reg }

// GRPC is the underlying grpc.Server, for serving on a custom listener
// (bufconn in tests).
func (s *Server) GRPC() *grpc.Server { return s.grpc }

// Listen binds the gRPC and metrics listeners from the config.
func (s *Server) Listen() error {
	cfg := s.cfg.Load()
	lis, err := net.Listen("tcp", cfg.Server.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s (server.listen / --listen): %w", cfg.Server.Listen, err)
	}
	s.lis = lis
	if cfg.Server.MetricsListen != "" {
		ml, err := net.Listen("tcp", cfg.Server.MetricsListen)
		if err != nil {
			lis.Close()
			return fmt.Errorf("listen on %s (server.metricsListen / --metrics-listen): %w", cfg.Server.MetricsListen, err)
		}
		s.metricsLis = ml
	}
	if s.mcp != nil {
		if err := s.mcp.listen(cfg.Server.MCP.Listen); err != nil {
			lis.Close()
			if s.metricsLis != nil {
				s.metricsLis.Close()
			}
			return err
		}
	}
	return nil
}

// Addr is the bound gRPC address (after Listen).
func (s *Server) Addr() net.Addr { return s.lis.Addr() }

// MetricsAddr is the bound metrics address, or nil when disabled.
func (s *Server) MetricsAddr() net.Addr {
	if s.metricsLis == nil {
		return nil
	}
	return s.metricsLis.Addr()
}

// MetricsHandler serves /metrics and /healthz.
func (s *Server) MetricsHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(s.prom, promhttp.HandlerOpts{Registry: s.prom}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		if !s.serving.Load() {
			http.Error(w, "not serving", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	return mux
}

// Serve serves on the listeners bound by Listen until ctx is done, then
// shuts down gracefully: health reports NOT_SERVING, new calls are refused,
// in-flight calls get the grace period to finish, every source is closed.
func (s *Server) Serve(ctx context.Context) error {
	if s.lis == nil {
		if err := s.Listen(); err != nil {
			return err
		}
	}
	errc := make(chan error, 3)
	if s.metricsLis != nil {
		s.metricsSrv = &http.Server{Handler: s.MetricsHandler(), ReadHeaderTimeout: 10 * time.Second}
		go func() {
			if err := s.metricsSrv.Serve(s.metricsLis); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("metrics listener: %w", err)
			}
		}()
	}
	if s.mcp != nil {
		s.mcp.serve(errc)
	}
	s.setServing(true)
	go func() { errc <- s.grpc.Serve(s.lis) }()
	stopWatch := s.watchConfigFile()
	defer stopWatch()
	s.log.Info("toolnexus serving", "grpc", s.lis.Addr().String(), "metrics", addrString(s.metricsLis), "mcp", s.mcpAddrString(),
		"tools", s.reg.Snapshot().Len(), "config", configName(s.opts.ConfigPath))

	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc:
	}
	s.Shutdown()
	return serveErr
}

func addrString(l net.Listener) string {
	if l == nil {
		return "disabled"
	}
	return l.Addr().String()
}

func configName(p string) string {
	if p == "" {
		return "embedded default"
	}
	return p
}

func (s *Server) setServing(on bool) {
	s.serving.Store(on)
	st := healthpb.HealthCheckResponse_NOT_SERVING
	if on {
		st = healthpb.HealthCheckResponse_SERVING
	}
	s.health.SetServingStatus("", st)
	s.health.SetServingStatus(pb.RegistryService_ServiceDesc.ServiceName, st)
	s.health.SetServingStatus(pb.SourceService_ServiceDesc.ServiceName, st)
}

// Shutdown stops the server gracefully (idempotent): NOT_SERVING first so
// load balancers move away, then drain within the grace period, then close
// every source, child processes included.
func (s *Server) Shutdown() {
	s.stopOnce.Do(func() {
		s.setServing(false)
		close(s.shutdown) // ends WatchTools streams, which would hold GracefulStop forever
		grace := s.cfg.Load().Server.GracePeriod
		mcpDone := make(chan struct{})
		go func() { s.mcp.shutdown(grace); close(mcpDone) }() // drains alongside gRPC
		done := make(chan struct{})
		go func() {
			s.grpc.GracefulStop()
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(grace):
			s.log.Warn("grace period over; cancelling the calls still running", "grace", grace)
			s.grpc.Stop()
			<-done
		}
		<-mcpDone
		if s.metricsSrv != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			_ = s.metricsSrv.Shutdown(ctx)
			cancel()
		} else if s.metricsLis != nil {
			s.metricsLis.Close()
		}
		if err := s.eng.Close(); err != nil {
			s.log.Warn("closing sources", "error", err)
		}
		s.log.Info("toolnexus stopped")
	})
}

// Close releases everything without serving (for a Server built but never
// served, e.g. in tests using GRPC() on a bufconn).
func (s *Server) Close() {
	if s.lis != nil && !s.serving.Load() {
		s.lis.Close()
	}
	s.Shutdown()
}

// Reload re-reads the config and applies it: a config that does not parse
// or validate is rejected with the reason and the old one keeps serving;
// otherwise only changed sources are rebuilt, limits, auth and TLS swap.
func (s *Server) Reload() (engine.Report, error) {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	cfg, err := s.loadConfig()
	if err == nil {
		err = s.checkExposure(cfg)
	}
	var tc *tls.Config
	if err == nil && cfg.Server.TLS.Enabled() {
		t := cfg.Server.TLS
		if tc, err = buildTLS(cfg.Resolve(t.Cert), cfg.Resolve(t.Key), cfg.Resolve(t.ClientCA)); err != nil {
			err = &config.Error{Key: "server.tls", Msg: err.Error()}
		}
	}
	if err == nil && cfg.Server.TLS.Enabled() != s.cfg.Load().Server.TLS.Enabled() {
		err = &config.Error{Key: "server.tls", Msg: "turning TLS on or off needs a restart; certificates can be swapped by reload"}
	}
	var rep engine.Report
	if err == nil {
		rep, err = s.eng.Apply(cfg)
	}
	if err != nil {
		s.metrics.Reloads.WithLabelValues("error").Inc()
		s.log.Error("reload rejected; the previous config keeps serving", "error", err)
		return rep, err
	}
	for _, w := range cfg.Warnings {
		s.log.Warn("config: " + w)
	}
	for _, key := range restartOnly(s.cfg.Load(), cfg) {
		s.log.Warn("config: " + key + " changed; it takes effect after a restart (the rest of the reload is applied)")
	}
	s.exec.SetLimits(cfg.Limits)
	s.auth.Store(newAuthenticator(cfg.Auth))
	if tc != nil {
		s.tlsConf.Store(tc)
	}
	s.cfg.Store(cfg)
	s.mcp.reconfigure(cfg)
	s.metrics.Reloads.WithLabelValues("ok").Inc()
	s.log.Info("config reloaded", "rebuilt", len(rep.Started), "removed", len(rep.Removed), "failed", len(rep.Failed), "revision", s.reg.Snapshot().Revision())
	return rep, nil
}

// restartOnly names the settings that changed between two configs but
// that a reload cannot apply (the listeners and the gRPC message cap are
// fixed when the server starts), so the operator is not left guessing.
func restartOnly(old, next *config.Config) []string {
	var keys []string
	if old.Server.Listen != next.Server.Listen {
		keys = append(keys, "server.listen")
	}
	if old.Server.MetricsListen != next.Server.MetricsListen {
		keys = append(keys, "server.metricsListen")
	}
	if old.Limits.MaxRequestBytes != next.Limits.MaxRequestBytes {
		keys = append(keys, "limits.maxRequestBytes")
	}
	keys = append(keys, mcpRestartOnly(old, next)...)
	return keys
}

// watchConfigFile polls the config file's modification time when
// server.watchConfig is on. Polling (every 2 s) keeps the dependency list
// short and works on every filesystem, including ConfigMap symlink swaps.
func (s *Server) watchConfigFile() (stop func()) {
	if s.opts.ConfigPath == "" || !s.cfg.Load().Server.WatchConfig {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		last := modTime(s.opts.ConfigPath)
		t := time.NewTicker(2 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if m := modTime(s.opts.ConfigPath); !m.Equal(last) {
					last = m
					_, _ = s.Reload()
				}
			}
		}
	}()
	return func() { close(done); <-finished }
}

func modTime(p string) time.Time {
	fi, err := os.Stat(p)
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}
