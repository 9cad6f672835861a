// Command tnserver is the toolnexus server for the interceptor-chain row of
// `make bench`: the same server.New as bin/toolnexus-server with the same
// flags the bench passes, plus --no-interceptors, which the production
// binary deliberately does not have (it turns off auth, the panic guard and
// the gRPC metrics). Both sides of the row run this binary, so the only
// difference between them is the chain.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/toolnexus/toolnexus/internal/serverknobs"
	"github.com/toolnexus/toolnexus/pkg/server"
)

func main() {
	server.EnterSandboxHelper() // first: the sandbox re-executes this program as its helper
	cfg := flag.String("config", "", "config file")
	listen := flag.String("listen", "127.0.0.1:0", "gRPC listen address")
	metrics := flag.String("metrics-listen", "-", "metrics listen address")
	workspace := flag.String("workspace", "", "workspace root")
	noChain := flag.Bool("no-interceptors", false, "serve without the interceptor chain")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	opts := server.Options{ConfigPath: *cfg, Listen: *listen, MetricsListen: *metrics, MCPListen: "-",
		Workspace: *workspace, Logger: log}
	serverknobs.Set(&opts, serverknobs.Knobs{DisableInterceptors: *noChain})
	srv, err := server.New(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if err := srv.Listen(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := srv.Serve(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
