// Package limits is the shape of the `limits` config section — global
// bounds on a call plus per-tool overrides — with no parsing and no
// dependency. It lives apart from internal/config so that the executor,
// which applies the limits on every call, does not depend on the config
// parser and through it on every source (and the MCP SDK).
package limits

import "time"

// Limits are the global limits plus per-tool overrides.
type Limits struct {
	// Timeout bounds every call (0 = no limit beyond the caller's deadline).
	Timeout time.Duration
	// MaxConcurrency caps calls running at once across all tools (0 = no cap).
	MaxConcurrency int
	// MaxOutputBytes truncates longer outputs, with a marker.
	MaxOutputBytes int
	// ValidateArguments checks arguments against the input schema.
	ValidateArguments bool
	// MaxRequestBytes caps one gRPC request message.
	MaxRequestBytes int
	// MaxResourceBytes caps what one resources/read or prompts/get of an
	// MCP server may return; a larger answer is refused, not cut (half a
	// file or image is worse than none).
	MaxResourceBytes int
	// Tools holds per-tool overrides by exact tool name.
	Tools map[string]ToolLimits
}

// ToolLimits overrides the global limits for one tool; nil fields inherit.
type ToolLimits struct {
	Timeout           *time.Duration
	MaxConcurrency    *int
	MaxOutputBytes    *int
	ValidateArguments *bool
	// MaxConcurrencyPerPrincipal caps one caller's calls of the tool
	// running at once; nil or 0 = no such cap.
	MaxConcurrencyPerPrincipal *int
}

// For resolves the effective limits of one tool: every field set, from the
// tool's override where it has one, else from the global value.
func (l Limits) For(name string) ToolLimits {
	eff := ToolLimits{Timeout: &l.Timeout, MaxConcurrency: new(int), MaxOutputBytes: &l.MaxOutputBytes, ValidateArguments: &l.ValidateArguments}
	if t, ok := l.Tools[name]; ok {
		if t.Timeout != nil {
			eff.Timeout = t.Timeout
		}
		if t.MaxConcurrency != nil {
			eff.MaxConcurrency = t.MaxConcurrency
		}
		if t.MaxOutputBytes != nil {
			eff.MaxOutputBytes = t.MaxOutputBytes
		}
		if t.ValidateArguments != nil {
			eff.ValidateArguments = t.ValidateArguments
		}
		eff.MaxConcurrencyPerPrincipal = t.MaxConcurrencyPerPrincipal
	}
	return eff
}
