package config

import (
	"fmt"
	"path/filepath"
)

// Overrides are the settings the command line (and TOOLNEXUS_* environment)
// may override. They are applied once, when the config is loaded, so every
// reader of the config — the core, the listeners, a reload — sees the same
// values and nothing downstream needs to know a flag existed.
type Overrides struct {
	// Listen, MetricsListen and MCPListen replace server.listen,
	// server.metricsListen and server.mcp.listen; "-" turns the metrics
	// listener or the MCP gateway off.
	Listen, MetricsListen, MCPListen string
	// WebListen replaces server.web.listen; "-" turns it off.
	WebListen string
	// Workspace replaces builtins.workspace. A relative path is taken from
	// the working directory (as a flag is), not from the config's directory.
	Workspace string
	// Debug serves the debug tools whatever the config says.
	Debug bool
	// Patches are JSON merge patches applied to the config file in order
	// before it is parsed (patch.go).
	Patches []string
}

// LoadWith is Load followed by the overrides.
func LoadWith(path string, o Overrides) (*Config, error) {
	cfg, err := loadPatched(path, o.Patches)
	if err != nil {
		return nil, err
	}
	if err := o.apply(cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

func (o Overrides) apply(cfg *Config) error {
	if o.Listen != "" {
		cfg.Server.Listen = o.Listen
	}
	cfg.Server.MetricsListen = override(cfg.Server.MetricsListen, o.MetricsListen)
	cfg.Server.MCP.Listen = override(cfg.Server.MCP.Listen, o.MCPListen)
	cfg.Server.Web.Listen = override(cfg.Server.Web.Listen, o.WebListen)
	if o.Debug {
		cfg.Debug = true
	}
	if o.Workspace != "" {
		abs, err := filepath.Abs(o.Workspace)
		if err != nil {
			return &Error{Key: "builtins.workspace", Msg: "--workspace: " + err.Error()}
		}
		if set := cfg.Builtins.Workspace; set != "" && cfg.Resolve(set) != abs {
			// Flag and environment beat the file, as everywhere; but the
			// container image sets TOOLNEXUS_WORKSPACE, so a mounted config's
			// workspace would be ignored without a word. Say so at start and
			// in --check.
			cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("builtins.workspace %q is overridden by --workspace / TOOLNEXUS_WORKSPACE (%s), which win over the config file (the container image sets TOOLNEXUS_WORKSPACE=/workspace): unset the variable (docker run -e TOOLNEXUS_WORKSPACE=, or env in the pod spec) or give both the same directory", set, abs))
		}
		cfg.Builtins.Workspace = abs
	}
	return nil
}

// override applies a listener flag: empty keeps the config's value, "-"
// disables the listener.
func override(current, flag string) string {
	switch flag {
	case "":
		return current
	case "-":
		return ""
	}
	return flag
}
