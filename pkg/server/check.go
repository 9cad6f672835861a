package server

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"os"
	"slices"

	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/engine"
	"github.com/toolnexus/toolnexus/internal/sandbox"
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
	r, err := CheckReport(opts)
	return r.Warnings, err
}

// CheckResult is what `--check` reports of a valid config: its warnings
// and a short summary of listeners, sources and identity.
type CheckResult struct {
	Warnings []string
	Summary  []string
}

// CheckReport is Check with the summary. Beyond what New refuses, it
// resolves every ${VAR} and ${file:/path} a source expands at start (the
// source would fail alone and be retried forever; --check refuses it), and
// warns about configs that start but do not do what was meant.
func CheckReport(opts Options) (CheckResult, error) {
	s := &Server{opts: opts}
	cfg, err := s.loadConfig()
	if err != nil {
		return CheckResult{}, publicError(err)
	}
	if err := cfg.CheckRefs(); err != nil {
		return CheckResult{}, publicError(err)
	}
	if _, err := preflight(cfg, opts.Insecure); err != nil {
		return CheckResult{}, publicError(err)
	}
	// The exporter is built (its options checked) but never connects: the
	// gRPC and HTTP clients dial on the first export, and there is none.
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	tracing, err := otlp.Setup(context.Background(), cfg.Telemetry, os.LookupEnv, quiet)
	if err != nil {
		return CheckResult{}, publicError(err)
	}
	_ = tracing.Shutdown(context.Background())
	reach, err := sandboxReach(cfg)
	if err != nil {
		return CheckResult{}, publicError(err)
	}
	warnings := append(slices.Clip(cfg.Warnings), checkFindings(cfg)...)
	return CheckResult{Warnings: append(warnings, reach...), Summary: checkSummary(cfg)}, nil
}

// sandboxReach probes the sandbox as the start would and lists the
// directories its commands cannot use (engine.ReachWarnings); a layer
// missing in mode "required" is the start's config error on sandbox.mode.
func sandboxReach(cfg *config.Config) ([]string, error) {
	mode := cfg.Sandbox.Mode
	if mode == "" {
		mode = sandbox.ModeAuto
	}
	if mode == sandbox.ModeOff {
		return []string{sandboxOffWarning}, nil
	}
	box, err := sandbox.NewAs(mode, sandbox.CommandID{UID: cfg.Sandbox.UID, GID: cfg.Sandbox.GID})
	var me *sandbox.MissingError
	if errors.As(err, &me) {
		return nil, &config.Error{Key: "sandbox.mode", Msg: err.Error()}
	}
	if err != nil {
		return nil, nil // the start says why (a program that cannot start the helper)
	}
	defer box.Close()
	return engine.ReachWarnings(box, cfg), nil
}

// sandboxOffWarning is --check's word on sandbox.mode "off": a valid
// setting, and one a reviewer of the config must not miss.
const sandboxOffWarning = `sandbox.mode: "off": every command a model starts (bash, and each stdio MCP server with "sandbox": true) runs with the server's own authority — its files, its network, its processes, its environment's reach; remove the key (default "auto") unless something else confines the server`

// preflight is what New and Check both refuse before anything starts: a
// listener beyond loopback that no credential guards, TLS files that do not
// load, sessions that overlap the workspace. It returns the TLS config to
// serve with (nil without TLS).
func preflight(cfg *config.Config, insecure bool) (*tls.Config, error) {
	if err := checkExposure(cfg, configuredAddrs(cfg), insecure); err != nil {
		return nil, err
	}
	tc, err := tlsFromConfig(cfg)
	if err != nil {
		return nil, err
	}
	if _, err := cfg.SessionsRoot(); err != nil {
		return nil, err
	}
	if err := checkCredentials(cfg); err != nil {
		return nil, err
	}
	if err := checkPinStore(cfg); err != nil {
		return nil, err
	}
	return tc, nil
}
