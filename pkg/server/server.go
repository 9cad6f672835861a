// Package server runs toolnexus: the core (every configured source, the
// registry, the one Execute path) served over gRPC — RegistryService,
// SourceService, grpc.health.v1, reflection — and, when configured, over MCP
// at /mcp, with Prometheus metrics on a separate HTTP listener, hot reload
// and graceful shutdown. The server owns every listener; the gRPC and MCP
// front-ends only translate their wire format.
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
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"

	"github.com/toolnexus/toolnexus/internal/cluster"
	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/console"
	"github.com/toolnexus/toolnexus/internal/core"
	"github.com/toolnexus/toolnexus/internal/gcfloor"
	"github.com/toolnexus/toolnexus/internal/grpcapi"
	"github.com/toolnexus/toolnexus/internal/mcpgateway"
	"github.com/toolnexus/toolnexus/internal/serverknobs"
	"github.com/toolnexus/toolnexus/internal/suspend"
	"github.com/toolnexus/toolnexus/internal/suspend/redisstore"
	"github.com/toolnexus/toolnexus/internal/telemetry"
	"github.com/toolnexus/toolnexus/internal/telemetry/otlp"
	"github.com/toolnexus/toolnexus/internal/web"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources/oauthclient"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// Options configures a Server. Zero values take the config file's settings,
// then the defaults.
type Options struct {
	// ConfigPath is the config file; empty serves the embedded default.
	ConfigPath string
	// ConfigPatches are JSON merge patches (RFC 7386) applied to the config
	// in order at every load (start, reload, --check): a deployment's
	// variants as additions to one base (see docs/deploy.md).
	ConfigPatches []string
	// Listen and MetricsListen override server.listen / server.metricsListen.
	// MetricsListen "-" disables the metrics listener.
	Listen        string
	MetricsListen string
	// MCPListen overrides server.mcp.listen (the MCP gateway at /mcp);
	// "-" disables the gateway.
	MCPListen string
	// WebListen overrides server.web.listen (the browsers' listener: the
	// OAuth login callback); "-" disables it.
	WebListen string
	// Workspace overrides builtins.workspace.
	Workspace string
	// Insecure allows a non-loopback listener without auth tokens or
	// mutual TLS.
	Insecure bool
	// Debug turns the debug tools on regardless of the config.
	Debug bool
	// Logger receives all logs (slog.Default when nil).
	Logger *slog.Logger
	// Native are your own Go tools, served in layer "native".
	Native []tool.Tool
	// AuditOutput is where the audit log goes when the config's audit
	// section has no path (os.Stderr when nil).
	AuditOutput io.Writer
	// ManageHeap applies server.gcHeapFloorMiB to the process's garbage
	// collector while serving. The collector is process-wide, so only the
	// program that owns the process should set it; Main does. It is left
	// alone when the GOGC environment variable is set: the operator chose.
	ManageHeap bool

	// knobs are the settings for the project's own tests and benchmarks
	// (internal/serverknobs), out of the public API.
	knobs serverknobs.Knobs
	// sourcesBehind (set by Main) makes New return before the sources
	// that reach an upstream have connected, so the listeners come up at
	// once; Serve says "toolnexus serving" once they have. A program
	// calling New itself gets a server whose sources have all started
	// or failed, as ever.
	sourcesBehind bool
}

func init() {
	serverknobs.Install(func(opts any, k serverknobs.Knobs) { opts.(*Options).knobs = k })
}

// Server is one toolnexus server.
type Server struct {
	opts Options
	log  *slog.Logger
	// stopEmbeddings ends search.embeddings' worker (embeddings.go).
	stopEmbeddings func()

	core   *core.Core
	api    *grpcapi.API
	mcp    *mcpgateway.Gateway // nil when server.mcp.listen is not set
	prom   *prometheus.Registry
	grpc   *grpc.Server
	health *health.Server

	tlsConf atomic.Pointer[tls.Config]

	reloadMu sync.Mutex
	shutdown chan struct{}
	stopOnce sync.Once
	stopErr  error // what the first Shutdown returned
	serving  atomic.Bool
	healthMu sync.Mutex // orders setServing against the readiness ticker

	lis        net.Listener
	metricsLis net.Listener
	metricsSrv *http.Server
	mcpLis     net.Listener
	mcpSrv     *http.Server
	mcpConns   connTracker

	// tracing is the OpenTelemetry provider; nil when tracing is off.
	tracing *telemetry.Provider

	// heapFloor is the GC heap floor while serving (a reload may change
	// it); nil when the heap is not managed.
	heapFloor atomic.Pointer[gcfloor.Floor]

	// cluster is the replicas' shared control plane (cluster.redis); nil
	// with one replica (cluster.go).
	cluster *cluster.Client
	// suspended is the shared store of suspended calls on it.
	suspended *redisstore.Redis

	// web is the browsers' listener (server.web.listen); nil when off.
	// oauth connects each caller's own account at OAuth upstreams; its
	// callback is on web (oauth.go).
	web   *web.Server
	oauth *oauthclient.Manager
	// console is the web console on web (console.go); nil when off.
	console *console.Console
}

// New loads the config, starts every source and builds the gRPC server. A
// config problem is a *ConfigError (the caller exits 2). Sources that fail
// to start are reported in ListSources; they never stop the server.
func New(opts Options) (*Server, error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	s := &Server{opts: opts, log: log, shutdown: make(chan struct{}), prom: prometheus.NewRegistry(), health: health.NewServer()}
	cfg, err := s.loadConfig()
	if err != nil {
		return nil, publicError(err)
	}
	tc, err := preflight(cfg, s.opts.Insecure)
	if err != nil {
		return nil, publicError(err)
	}
	if tc != nil {
		s.tlsConf.Store(tc)
	}
	mcpKey, err := cfg.MCPStateKey()
	if err != nil {
		return nil, publicError(err)
	}
	s.prom.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if s.tracing, err = otlp.Setup(context.Background(), cfg.Telemetry, os.LookupEnv, log); err != nil {
		return nil, publicError(err)
	}
	if err := s.startCluster(cfg); err != nil {
		s.shutdownTracing()
		return nil, publicError(err)
	}
	suspended := suspend.Store(s.sharedSuspended())
	if s.suspended == nil {
		suspended = suspend.NewMemory(nil, 0) // shared by the core and the OAuth logins
	}
	if err := s.startOAuth(cfg, suspended); err != nil {
		s.closeCluster()
		s.shutdownTracing()
		return nil, publicError(err)
	}
	s.core, err = core.New(cfg, core.Options{Logger: log, Metrics: s.prom, Native: opts.Native,
		Tracing: s.tracing.TracerProvider(), AuditStderr: opts.AuditOutput, Cluster: s.cluster, Suspended: suspended, OAuth: s.oauth,
		SourcesInBackground: true})
	if err != nil {
		s.closeOAuth()
		s.closeCluster()
		s.shutdownTracing()
		return nil, publicError(err)
	}
	if err := s.startConsole(cfg); err != nil {
		_ = s.core.Close(context.Background())
		s.closeOAuth()
		s.closeCluster()
		s.shutdownTracing()
		return nil, publicError(err)
	}
	if !opts.sourcesBehind {
		_ = s.core.WaitSourcesStarted(context.Background()) // each start is bounded by its source's timeout
	}
	s.serveClusterReloads()
	embedder := s.startEmbeddings(cfg, log)
	s.api = grpcapi.New(s.core, grpcapi.Options{Logger: log, Metrics: s.prom, Reload: s.reloadForRPC,
		Shutdown: s.shutdown, DisableInterceptors: opts.knobs.DisableInterceptors, Embedder: embedder})

	gopts := append(s.api.ServerOptions(), s.tracingOptions()...)
	gopts = append(gopts,
		grpc.MaxRecvMsgSize(cfg.Limits.MaxRequestBytes),
		grpc.NumStreamWorkers(streamWorkers()),
	)
	gopts = append(gopts, grpcBounds()...) // hardening.go
	if cfg.Server.TLS.Enabled() {
		gopts = append(gopts, grpc.Creds(credentials.NewTLS(s.dynamicTLS())))
	}
	s.grpc = grpc.NewServer(gopts...)
	grpcapi.RegisterConnections(s.grpc, s.oauth)
	s.api.Register(s.grpc)
	healthpb.RegisterHealthServer(s.grpc, s.health)
	reflection.Register(s.grpc)
	if gc := cfg.Server.MCP; gc.Listen != "" {
		s.mcp = mcpgateway.New(s.core, mcpgateway.Options{Name: gc.Name, Version: gc.Version, Discovery: gc.Discovery, Pinned: gc.Pinned,
			MaxBodyBytes: int64(cfg.Limits.MaxRequestBytes), Logger: log, Tracing: s.tracing != nil,
			Stateless: cfg.MCPStateless(), StateKey: s.mcpStateKey(cfg, mcpKey), Embedder: embedder})
	}
	return s, nil
}

// startHeapFloor applies server.gcHeapFloorMiB (see internal/gcfloor) when
// the program owns the process and GOGC does not say otherwise.
func (s *Server) startHeapFloor() {
	if !s.opts.ManageHeap {
		return
	}
	if v, set := os.LookupEnv("GOGC"); set {
		s.log.Info("GOGC is set: server.gcHeapFloorMiB is not applied", "GOGC", v)
		return
	}
	// Started even at 0, so that a reload can raise it.
	s.heapFloor.Store(gcfloor.Start(s.core.Config().Server.GCHeapFloor))
}

// streamWorkers is how many goroutines grpc-go keeps to serve RPCs, each
// reused call after call (grpc.NumStreamWorkers, EXPERIMENTAL in grpc-go:
// a one-line change to drop if it goes away).
//
// Without them every RPC runs on a goroutine of its own, which starts with
// a small stack and outgrows it on every call: the runtime then copies the
// stack and adjusts each frame on it, and at 64 callers that copying was
// 30% of the server's CPU (BENCHMARKS.md, "The cheapest call, again"). A
// worker keeps the stack it grew. An RPC that finds every worker busy —
// more concurrent calls than workers, or workers held by long streams
// (WatchTools, ExecuteStream) — still gets a goroutine of its own, as
// before. An idle worker costs a parked goroutine whose stack the
// collector shrinks back (a few KiB), so the pool covers 64 concurrent
// calls even on a small machine, and 16 per CPU above that.
func streamWorkers() uint32 { return uint32(max(64, 16*runtime.GOMAXPROCS(0))) }

// loadConfig reads the config file and applies the command-line overrides,
// once, so that everything downstream reads one config.
func (s *Server) loadConfig() (*config.Config, error) {
	return config.LoadWith(s.opts.ConfigPath, config.Overrides{
		Listen: s.opts.Listen, MetricsListen: s.opts.MetricsListen, MCPListen: s.opts.MCPListen, WebListen: s.opts.WebListen,
		Workspace: s.opts.Workspace, Debug: s.opts.Debug, Patches: s.opts.ConfigPatches,
	})
}

// dynamicTLS serves the certificates current at each handshake, so a
// reload can swap them without a restart.
func (s *Server) dynamicTLS() *tls.Config {
	return &tls.Config{
		MinVersion:         tls.VersionTLS12,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) { return s.tlsConf.Load(), nil },
	}
}

func tlsFromConfig(cfg *config.Config) (*tls.Config, error) {
	t := cfg.Server.TLS
	if !t.Enabled() {
		return nil, nil
	}
	tc, err := buildTLS(cfg.Resolve(t.Cert), cfg.Resolve(t.Key), cfg.Resolve(t.ClientCA))
	if err != nil {
		return nil, &config.Error{Key: "server.tls", Msg: err.Error()}
	}
	return tc, nil
}

// Registry is the server's registry, e.g. to publish tools from code.
func (s *Server) Registry() *registry.Registry { return s.core.Registry() }

// GRPC is the underlying grpc.Server, for serving on a custom listener
// (bufconn in tests).
func (s *Server) GRPC() *grpc.Server { return s.grpc }

// Serve serves on the listeners bound by Listen until ctx is done, then
// shuts down gracefully: health reports NOT_SERVING, new calls are refused,
// in-flight calls get the grace period to finish, every source is closed.
func (s *Server) Serve(ctx context.Context) error {
	if s.lis == nil {
		if err := s.Listen(); err != nil {
			return err
		}
	}
	errc := make(chan error, 4)
	s.serveMetrics(errc)
	s.serveMCP(errc)
	s.serveWeb(errc)
	s.startHeapFloor()
	s.setServing(true)
	go func() { errc <- s.grpc.Serve(s.lis) }()
	stopWatch := s.watchConfigFile()
	defer stopWatch()
	stopReadiness := s.watchReadiness()
	defer stopReadiness()
	if s.opts.sourcesBehind {
		s.log.Info("toolnexus listening; sources connecting", "grpc", s.lis.Addr().String(), "metrics", addrString(s.metricsLis), "mcp", addrString(s.mcpLis))
		_ = s.core.WaitSourcesStarted(ctx) // a signal meanwhile shuts down below
	}
	s.log.Info("toolnexus serving", "grpc", s.lis.Addr().String(), "metrics", addrString(s.metricsLis), "mcp", addrString(s.mcpLis),
		"tools", s.core.Snapshot().Len(), "config", configName(s.opts.ConfigPath), "beyond_loopback", s.exposedNow())

	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc:
	}
	// ctx is done; the drain still gets its grace period.
	_ = s.Shutdown(context.WithoutCancel(ctx)) // logged by Shutdown
	return serveErr
}

func configName(p string) string {
	if p == "" {
		return "embedded default"
	}
	return p
}

// sourcesCloseBound bounds closing the sources at Shutdown, after the
// drain.
const sourcesCloseBound = 10 * time.Second

// Shutdown stops the server gracefully: NOT_SERVING first so load
// balancers move away, then in-flight calls drain within the grace period
// (server.gracePeriod) or until ctx ends, whichever comes first, after
// which the calls still running are cancelled; then every source closes,
// child processes included (within 10 s of the drain's end, whatever ctx
// says). It returns ctx's error when ctx cut the drain
// short, and any error closing the sources. It is idempotent: later calls
// wait for the first and return its result.
func (s *Server) Shutdown(ctx context.Context) error {
	s.stopOnce.Do(func() { s.stopErr = s.stop(ctx) })
	return s.stopErr
}

func (s *Server) stop(ctx context.Context) error {
	s.setServing(false)
	close(s.shutdown) // ends WatchTools streams, which would hold GracefulStop forever
	grace := s.core.Config().Server.GracePeriod
	drainCtx, cancel := context.WithTimeout(ctx, grace)
	defer cancel()
	mcpDone := make(chan struct{})
	go func() { s.shutdownMCP(drainCtx, grace); close(mcpDone) }() // drains alongside gRPC
	done := make(chan struct{})
	go func() {
		s.grpc.GracefulStop()
		close(done)
	}()
	var cut error
	select {
	case <-done:
	case <-drainCtx.Done():
		cut = ctx.Err() // nil when the grace period, not the caller, ended the drain
		s.log.Warn("grace period over; cancelling the calls still running", "grace", grace)
		s.grpc.Stop()
		<-done
	}
	<-mcpDone
	s.shutdownMetrics()
	s.shutdownWeb()
	// The sources close after the drain even when ctx cut it short: their
	// children are killed, not waited for, so this takes little; the
	// bound only keeps a source that hangs from holding Shutdown forever.
	closeCtx, cancelClose := context.WithTimeout(context.WithoutCancel(ctx), sourcesCloseBound)
	closeErr := s.core.Close(closeCtx)
	cancelClose()
	if closeErr != nil {
		s.log.Warn("closing sources", "error", closeErr)
	}
	s.closeOAuth()
	s.closeCluster()
	if s.stopEmbeddings != nil {
		s.stopEmbeddings()
	}
	s.shutdownTracing()
	s.heapFloor.Load().Stop()
	s.log.Info("toolnexus stopped")
	return errors.Join(cut, closeErr)
}

// Close releases everything without serving (for a Server built but never
// served, e.g. in tests using GRPC() on a bufconn); on a serving Server it
// is Shutdown.
func (s *Server) Close(ctx context.Context) error {
	if s.lis != nil && !s.serving.Load() {
		s.lis.Close()
	}
	return s.Shutdown(ctx)
}
