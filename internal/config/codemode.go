package config

import (
	"encoding/json"
	"time"
)

// Defaults of the codeMode section.
const (
	DefaultCodeModeMaxCalls  = 100
	DefaultCodeModeTimeout   = 10 * time.Second
	DefaultCodeModeMemoryMB  = 512
	DefaultCodeModeMaxOutput = 64 << 10
	// Interpreters at once, in total and per principal: bash's default
	// caps (limits.tools.bash), as each is a process of its own.
	DefaultCodeModeMaxConcurrency             = 8
	DefaultCodeModeMaxConcurrencyPerPrincipal = 4
)

// CodeMode is the `codeMode` section: the run_code and describe_tools
// tools (docs/codemode.md). Off by default.
type CodeMode struct {
	// Enabled serves run_code and describe_tools (read at start: changing
	// it needs a restart).
	Enabled bool
	// MaxCalls caps the inner tool calls of one run.
	MaxCalls int
	// Timeout is one run's wall-clock limit.
	Timeout time.Duration
	// MemoryMB is the interpreter process's address-space limit on top of
	// what it maps at start.
	MemoryMB int
	// MaxOutputBytes caps a run's return value plus printed text.
	MaxOutputBytes int
	// MaxConcurrency caps the interpreters running at once, and
	// MaxConcurrencyPerPrincipal those of one principal (0: no cap).
	MaxConcurrency, MaxConcurrencyPerPrincipal int
}

func parseCodeMode(raw json.RawMessage) (CodeMode, error) {
	c := CodeMode{MaxCalls: DefaultCodeModeMaxCalls, Timeout: DefaultCodeModeTimeout,
		MemoryMB: DefaultCodeModeMemoryMB, MaxOutputBytes: DefaultCodeModeMaxOutput,
		MaxConcurrency: DefaultCodeModeMaxConcurrency, MaxConcurrencyPerPrincipal: DefaultCodeModeMaxConcurrencyPerPrincipal}
	if raw == nil {
		return c, nil
	}
	var r struct {
		Enabled        *bool  `json:"enabled"`
		MaxCalls       *int   `json:"maxCalls"`
		TimeoutMS      *int64 `json:"timeoutMs"`
		MemoryMB       *int   `json:"memoryMB"`
		MaxOutputBytes *int   `json:"maxOutputBytes"`

		MaxConcurrency             *int `json:"maxConcurrency"`
		MaxConcurrencyPerPrincipal *int `json:"maxConcurrencyPerPrincipal"`
	}
	if err := strictDecode("codeMode", raw, &r); err != nil {
		return c, err
	}
	if r.Enabled != nil {
		c.Enabled = *r.Enabled
	}
	if r.MaxCalls != nil {
		if *r.MaxCalls < 1 || *r.MaxCalls > 100000 {
			return c, keyErr("codeMode.maxCalls", "must be between 1 and 100000 (default %d)", DefaultCodeModeMaxCalls)
		}
		c.MaxCalls = *r.MaxCalls
	}
	if r.TimeoutMS != nil {
		if *r.TimeoutMS < 100 || *r.TimeoutMS > 600000 {
			return c, keyErr("codeMode.timeoutMs", "must be between 100 and 600000 milliseconds (default %d)", DefaultCodeModeTimeout.Milliseconds())
		}
		c.Timeout = time.Duration(*r.TimeoutMS) * time.Millisecond
	}
	if r.MemoryMB != nil {
		if *r.MemoryMB < 64 || *r.MemoryMB > 65536 {
			return c, keyErr("codeMode.memoryMB", "must be between 64 and 65536 (default %d)", DefaultCodeModeMemoryMB)
		}
		c.MemoryMB = *r.MemoryMB
	}
	if r.MaxOutputBytes != nil {
		if *r.MaxOutputBytes < 1024 || *r.MaxOutputBytes > 16<<20 {
			return c, keyErr("codeMode.maxOutputBytes", "must be between 1024 and 16777216 (default %d)", DefaultCodeModeMaxOutput)
		}
		c.MaxOutputBytes = *r.MaxOutputBytes
	}
	if err := interpreterCap("codeMode.maxConcurrency", r.MaxConcurrency, &c.MaxConcurrency, "in total"); err != nil {
		return c, err
	}
	if err := interpreterCap("codeMode.maxConcurrencyPerPrincipal", r.MaxConcurrencyPerPrincipal, &c.MaxConcurrencyPerPrincipal, "for one token"); err != nil {
		return c, err
	}
	return c, nil
}

// interpreterCap checks and sets one of the interpreter caps.
func interpreterCap(key string, v *int, dst *int, scope string) error {
	if v == nil {
		return nil
	}
	if *v < 0 || *v > 10000 {
		return keyErr(key, "must be between 0 (no cap) and 10000: the run_code interpreters that may run at once %s (default %d)", scope, *dst)
	}
	*dst = *v
	return nil
}
