package config

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolnexus/toolnexus/internal/sandbox"
)

// Sandbox is the `sandbox` section: how the commands a model starts
// (bash, and stdio MCP servers marked "sandbox": true) are confined.
type Sandbox struct {
	// Mode is auto (default: every layer the kernel allows), required
	// (refuse to start unless all are available) or off.
	Mode sandbox.Mode
	// Network lets commands open network sockets (default false).
	Network bool
	// ReadPaths are readable besides the system paths; absolute, or
	// resolved against the config file's directory.
	ReadPaths []string
	// Limits bound each command; Limits.CPU zero means the call's timeout.
	Limits sandbox.Limits
}

func defaultSandbox() Sandbox {
	return Sandbox{Mode: sandbox.ModeAuto, Limits: sandbox.DefaultLimits}
}

func parseSandbox(raw json.RawMessage, baseDir string) (Sandbox, error) {
	s := defaultSandbox()
	if raw == nil {
		return s, nil
	}
	var r struct {
		Mode      *string         `json:"mode"`
		Network   *bool           `json:"network"`
		ReadPaths *[]string       `json:"readPaths"`
		Limits    json.RawMessage `json:"limits"`
	}
	if err := strictDecode("sandbox", raw, &r); err != nil {
		return s, err
	}
	var lim *struct {
		Memory    *int64 `json:"memory"`
		Processes *int   `json:"processes"`
		FileSize  *int64 `json:"fileSize"`
		OpenFiles *int   `json:"openFiles"`
		CPU       *int64 `json:"cpu"`
	}
	if raw := nonNull(r.Limits); raw != nil {
		if err := strictDecode("sandbox.limits", raw, &lim); err != nil {
			return s, err
		}
	}
	if r.Mode != nil {
		m := sandbox.Mode(*r.Mode)
		if !slices.Contains(sandbox.Modes, m) {
			return s, keyErr("sandbox.mode", "must be \"auto\", \"required\" or \"off\", not %q", *r.Mode)
		}
		s.Mode = m
	}
	if r.Network != nil {
		s.Network = *r.Network
	}
	if r.ReadPaths != nil {
		for i, p := range *r.ReadPaths {
			if strings.TrimSpace(p) == "" || strings.IndexByte(p, 0) >= 0 {
				return s, keyErr("sandbox.readPaths["+strconv.Itoa(i)+"]", "must be a directory or file path")
			}
			if !filepath.IsAbs(p) {
				p = filepath.Join(baseDir, p)
			}
			s.ReadPaths = append(s.ReadPaths, filepath.Clean(p))
		}
	}
	if l := lim; l != nil {
		if l.Memory != nil {
			if *l.Memory < 0 {
				return s, keyErr("sandbox.limits.memory", "must be >= 0 bytes (0 = no limit; default 2147483648, 2 GiB)")
			}
			s.Limits.Memory = *l.Memory
		}
		if l.Processes != nil {
			if *l.Processes < 0 {
				return s, keyErr("sandbox.limits.processes", "must be >= 0 (0 = no limit; default 256)")
			}
			s.Limits.Processes = *l.Processes
		}
		if l.FileSize != nil {
			if *l.FileSize < 0 {
				return s, keyErr("sandbox.limits.fileSize", "must be >= 0 bytes (0 = no limit; default 1073741824, 1 GiB)")
			}
			s.Limits.FileSize = *l.FileSize
		}
		if l.OpenFiles != nil {
			if *l.OpenFiles < 0 {
				return s, keyErr("sandbox.limits.openFiles", "must be >= 0 (0 = no limit; default 1024)")
			}
			s.Limits.OpenFiles = *l.OpenFiles
		}
		if l.CPU != nil {
			if *l.CPU < 0 {
				return s, keyErr("sandbox.limits.cpu", "must be >= 0 milliseconds (0 = the call's timeout, the default)")
			}
			s.Limits.CPU = time.Duration(*l.CPU) * time.Millisecond
		}
	}
	return s, nil
}
