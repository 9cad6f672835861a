// Package grpcapi is the gRPC front-end of the core: RegistryService and
// SourceService, and the interceptor chain around them. It translates
// protobuf to core calls and back and nothing else; the rules about calls
// live in the core. The server (pkg/server) owns the grpc.Server, its
// listener, health and reflection.
package grpcapi

import (
	"context"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/core"
	"github.com/toolnexus/toolnexus/internal/search"
)

// Options configures the front-end.
type Options struct {
	Logger *slog.Logger
	// Metrics is where the gRPC server metrics (grpc_server_*) register.
	Metrics prometheus.Registerer
	// Reload re-reads the config and applies it (SourceService.Reload).
	Reload func(ctx context.Context) (core.Report, error)
	// Shutdown is closed when the server starts shutting down; it ends the
	// WatchTools streams, which would otherwise hold a graceful stop forever.
	Shutdown <-chan struct{}
	// DisableInterceptors serves without the interceptor chain. It exists
	// for `make bench`, which measures what the chain costs; never use it
	// in production (no auth, no panic guard, no metrics).
	DisableInterceptors bool
	// Embedder is search.embeddings' semantic side, fused into
	// SearchTools' ranking; nil ranks lexically. The caller owns it.
	Embedder *search.Embedder
}

// API serves the core over gRPC.
type API struct {
	core        Core
	opts        Options
	log         *slog.Logger
	protos      protoCache
	search      search.Cache // SearchTools' index of the newest snapshot (search.go)
	grpcMetrics *grpcMetrics
	watches     watchCounter // open WatchTools streams per principal (watchlimit.go)
}

// New makes the front-end for c.
func New(c Core, opts Options) *API {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	a := &API{core: c, opts: opts, log: opts.Logger}
	a.search.Embedder = opts.Embedder
	a.search.Servers = func() map[string]search.ServerInfo {
		out := map[string]search.ServerInfo{}
		for _, s := range c.Sources() {
			out[s.Kind+"/"+s.Name] = search.ServerInfo{Title: s.Title, Description: s.Description}
		}
		return out
	}
	a.grpcMetrics = newGRPCMetrics()
	if opts.Metrics != nil {
		opts.Metrics.MustRegister(a.grpcMetrics)
	}
	return a
}

// ServerOptions are the grpc.ServerOptions the front-end needs: its
// interceptor chain.
func (a *API) ServerOptions() []grpc.ServerOption {
	if a.opts.DisableInterceptors {
		return nil
	}
	return []grpc.ServerOption{grpc.ChainUnaryInterceptor(a.unaryChain()...), grpc.ChainStreamInterceptor(a.streamChain()...)}
}

// Register adds RegistryService, SourceService and SessionService to gs, and creates the
// gRPC metrics series for every method so dashboards have them from the
// first scrape.
func (a *API) Register(gs *grpc.Server) {
	pb.RegisterRegistryServiceServer(gs, &registryService{a: a})
	pb.RegisterSourceServiceServer(gs, &sourceService{a: a})
	pb.RegisterSessionServiceServer(gs, &sessionService{a: a})
	pb.RegisterApprovalServiceServer(gs, &approvalService{a: a})
	pb.RegisterFeatureServiceServer(gs, &featureService{a: a})
	a.grpcMetrics.initialize(gs)
}
