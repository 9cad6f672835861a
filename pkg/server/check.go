package server

import (
	"context"
	"io"
	"log/slog"
	"os"

	"github.com/toolnexus/toolnexus/internal/telemetry/otlp"
)

// Check validates what New would refuse, without starting anything: the
// config file with the command-line overrides in opts, the rule for
// listeners beyond loopback, the TLS files, the telemetry section and where
// the sessions live. `toolnexus-server --check` given a deployment's flags
// thus answers what that deployment's start would, short of binding ports
// and starting sources. It returns the config's warnings; a problem is a
// *ConfigError naming the key.
func Check(opts Options) (warnings []string, err error) {
	s := &Server{opts: opts}
	cfg, err := s.loadConfig()
	if err != nil {
		return nil, publicError(err)
	}
	if err := checkExposure(cfg, configuredAddrs(cfg), opts.Insecure); err != nil {
		return nil, publicError(err)
	}
	if _, err := tlsFromConfig(cfg); err != nil {
		return nil, publicError(err)
	}
	if _, err := cfg.SessionsRoot(); err != nil {
		return nil, publicError(err)
	}
	// The exporter is built (its options checked) but never connects: the
	// gRPC and HTTP clients dial on the first export, and there is none.
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	tracing, err := otlp.Setup(context.Background(), cfg.Telemetry, os.LookupEnv, quiet)
	if err != nil {
		return nil, publicError(err)
	}
	_ = tracing.Shutdown(context.Background())
	return cfg.Warnings, nil
}
