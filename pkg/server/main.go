package server

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// Exit codes of Main.
const (
	ExitOK     = 0
	ExitFailed = 1 // could not listen, or serving failed
	ExitConfig = 2 // bad flags or config: the message names the key
)

// Main is the whole server program: flags and TOOLNEXUS_* environment,
// config, sources, serve until SIGINT/SIGTERM, reload on SIGHUP. It returns
// the process exit code. native are your own Go tools. Started as the
// sandbox's helper, it serves as that instead (EnterSandboxHelper).
func Main(args []string, native ...tool.Tool) int {
	EnterSandboxHelper()
	return run(args, os.Stderr, native)
}

// envDefault returns the TOOLNEXUS_* value, or def when unset.
func envDefault(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

func run(args []string, stderr io.Writer, native []tool.Tool) int {
	fs := flag.NewFlagSet("toolnexus-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		configPath    = fs.String("config", envDefault("TOOLNEXUS_CONFIG", ""), "config file (mcp.json superset); empty serves the embedded default [TOOLNEXUS_CONFIG]")
		configPatches = configPatchFlag(fs)
		listen        = fs.String("listen", envDefault("TOOLNEXUS_LISTEN", ""), "gRPC listen address (default "+config.DefaultListen+", or server.listen) [TOOLNEXUS_LISTEN]")
		metricsListen = fs.String("metrics-listen", envDefault("TOOLNEXUS_METRICS_LISTEN", ""), "Prometheus /metrics listen address (default "+config.DefaultMetricsListen+"); \"-\" or \"off\" disables [TOOLNEXUS_METRICS_LISTEN]")
		mcpListen     = fs.String("mcp-listen", envDefault("TOOLNEXUS_MCP_LISTEN", ""), "serve the tools over MCP streamable HTTP at http://ADDR/mcp (off unless set, or server.mcp.listen); \"-\" or \"off\" disables [TOOLNEXUS_MCP_LISTEN]")
		webListen     = fs.String("web-listen", envDefault("TOOLNEXUS_WEB_LISTEN", ""), "serve the browsers' pages at http://ADDR (the OAuth login callback /oauth/callback; off unless set, or server.web.listen); \"-\" or \"off\" disables [TOOLNEXUS_WEB_LISTEN]")
		workspace     = fs.String("workspace", envDefault("TOOLNEXUS_WORKSPACE", ""), "root the builtin file tools are confined to (default ./workspace, or builtins.workspace) [TOOLNEXUS_WORKSPACE]")
		logLevel      = fs.String("log-level", envDefault("TOOLNEXUS_LOG_LEVEL", "info"), "debug, info, warn or error [TOOLNEXUS_LOG_LEVEL]")
		logFormat     = fs.String("log-format", envDefault("TOOLNEXUS_LOG_FORMAT", "text"), "text or json [TOOLNEXUS_LOG_FORMAT]")
		insecure      = fs.Bool("insecure", envBool("TOOLNEXUS_INSECURE"), "allow a non-loopback listen address without auth tokens or mutual TLS [TOOLNEXUS_INSECURE]")
		debugTools    = fs.Bool("debug", envBool("TOOLNEXUS_DEBUG"), "serve the debug tools (debug_echo, debug_sleep, debug_fail, debug_panic) [TOOLNEXUS_DEBUG]")
		checkOnly     = fs.Bool("check", false, "validate the config and exit (0 valid, 2 invalid)")
		pprofListen   = fs.String("pprof-listen", envDefault("TOOLNEXUS_PPROF_LISTEN", ""), "serve Go profiles at http://ADDR/debug/pprof/ (loopback addresses only; off unless set) [TOOLNEXUS_PPROF_LISTEN]")
	)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return ExitConfig
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "toolnexus-server: unexpected argument %q (flags only; see --help)\n", fs.Arg(0))
		return ExitConfig
	}
	logger, err := newLogger(stderr, *logLevel, *logFormat)
	if err != nil {
		fmt.Fprintln(stderr, "toolnexus-server:", err)
		return ExitConfig
	}
	slog.SetDefault(logger)
	if *metricsListen == "off" {
		*metricsListen = "-"
	}
	if *mcpListen == "off" {
		*mcpListen = "-"
	}
	if *webListen == "off" {
		*webListen = "-"
	}
	if *pprofListen != "" && !isLoopback(*pprofListen) {
		fmt.Fprintf(stderr, "toolnexus-server: --pprof-listen %q: profiles are served on a loopback address only (e.g. 127.0.0.1:6060)\n", *pprofListen)
		return ExitConfig
	}
	opts := Options{ConfigPath: *configPath, ConfigPatches: *configPatches, Listen: *listen, MetricsListen: *metricsListen, MCPListen: *mcpListen, WebListen: *webListen,
		Workspace: *workspace, Insecure: *insecure, Debug: *debugTools, Logger: logger, Native: native, ManageHeap: true,
		sourcesBehind: true} // the listeners come up before a slow upstream has answered
	if *checkOnly {
		r, err := CheckReport(opts)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return ExitConfig
		}
		for _, w := range r.Warnings {
			fmt.Fprintln(stderr, "warning:", w)
		}
		for _, line := range r.Summary {
			fmt.Fprintln(stderr, line)
		}
		fmt.Fprintln(stderr, "config OK")
		return ExitOK
	}
	srv, err := New(opts)
	if err != nil {
		fmt.Fprintln(stderr, err)
		var ce *ConfigError
		if errors.As(err, &ce) {
			return ExitConfig
		}
		return ExitFailed
	}
	if err := srv.Listen(); err != nil {
		fmt.Fprintln(stderr, "toolnexus-server:", err)
		_ = srv.Close(context.Background()) // nothing served yet: nothing to drain
		if errors.As(err, new(*ConfigError)) {
			return ExitConfig
		}
		return ExitFailed
	}
	if *pprofListen != "" {
		stopPprof, addr, err := startPprof(*pprofListen)
		if err != nil {
			fmt.Fprintln(stderr, "toolnexus-server:", err)
			_ = srv.Close(context.Background()) // nothing served yet: nothing to drain
			return ExitFailed
		}
		defer stopPprof()
		logger.Info("profiles served", "pprof", "http://"+addr.String()+"/debug/pprof/")
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				logger.Info("SIGHUP: reloading the config")
				_, _ = srv.Reload(ctx) // a rejected reload is logged
			}
		}
	}()
	if err := srv.Serve(ctx); err != nil {
		logger.Error("serving failed", "error", err)
		return ExitFailed
	}
	return ExitOK
}

func envBool(name string) bool {
	v, _ := strconv.ParseBool(os.Getenv(name))
	return v
}

func newLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch strings.ToLower(format) {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: use text or json", format)
}

// configPatchFlag is --config-patch, repeatable, and TOOLNEXUS_CONFIG_PATCHES
// (comma-separated) as its default.
func configPatchFlag(fs *flag.FlagSet) *[]string {
	var patches []string
	if v := os.Getenv("TOOLNEXUS_CONFIG_PATCHES"); v != "" {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				patches = append(patches, p)
			}
		}
	}
	fromEnv := true
	fs.Func("config-patch", "a JSON merge patch applied to the config (repeatable, in order) [TOOLNEXUS_CONFIG_PATCHES, comma-separated]", func(v string) error {
		if fromEnv { // a flag replaces the environment's list
			patches, fromEnv = nil, false
		}
		patches = append(patches, v)
		return nil
	})
	return &patches
}
