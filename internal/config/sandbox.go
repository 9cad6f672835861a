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
	// Egress, when set, gives commands the network through the egress
	// proxy only, where its rules allow (egress.go); nil: Network decides.
	Egress *Egress
	// UID and GID are the host ids a root server's commands act as
	// (default 65534; never 0). A non-root server's commands act as its
	// own ids.
	UID, GID int
}

func defaultSandbox() Sandbox {
	return Sandbox{Mode: sandbox.ModeAuto, Limits: sandbox.DefaultLimits, UID: sandbox.DefaultCommandID, GID: sandbox.DefaultCommandID}
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
		UID       *int64          `json:"uid"`
		GID       *int64          `json:"gid"`
		Egress    json.RawMessage `json:"egress"`
	}
	if err := strictDecode("sandbox", raw, &r); err != nil {
		return s, err
	}
	for _, id := range []struct {
		key string
		v   *int64
		out *int
	}{{"sandbox.uid", r.UID, &s.UID}, {"sandbox.gid", r.GID, &s.GID}} {
		if id.v == nil {
			continue
		}
		if *id.v < 1 || *id.v > 1<<32-2 {
			return s, keyErr(id.key, "must be an unprivileged host id from 1 to 4294967294 that owns no file the server needs (default 65534), not %d", *id.v)
		}
		*id.out = int(*id.v)
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
	if raw := nonNull(r.Egress); raw != nil {
		e, err := parseEgress(raw)
		if err != nil {
			return s, err
		}
		switch {
		case s.Network:
			return s, keyErr("sandbox.egress", "cannot be set with sandbox.network true: egress gives commands the network through the proxy only (remove sandbox.network)")
		case s.Mode == sandbox.ModeOff:
			return s, keyErr("sandbox.egress", "needs the sandbox: sandbox.mode is \"off\", where commands would reach the network unconfined (use \"auto\" or \"required\")")
		}
		s.Egress = e
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
		if err := nonNegative(&s.Limits.Memory, l.Memory, "sandbox.limits.memory", "must be >= 0 bytes (0 = no limit; default 2147483648, 2 GiB)"); err != nil {
			return s, err
		}
		if err := nonNegative(&s.Limits.Processes, l.Processes, "sandbox.limits.processes", "must be >= 0 (0 = no limit; default 256)"); err != nil {
			return s, err
		}
		if err := nonNegative(&s.Limits.FileSize, l.FileSize, "sandbox.limits.fileSize", "must be >= 0 bytes (0 = no limit; default 1073741824, 1 GiB)"); err != nil {
			return s, err
		}
		if err := nonNegative(&s.Limits.OpenFiles, l.OpenFiles, "sandbox.limits.openFiles", "must be >= 0 (0 = no limit; default 1024)"); err != nil {
			return s, err
		}
		if err := nonNegativeMillis(&s.Limits.CPU, l.CPU, "sandbox.limits.cpu", "must be >= 0 milliseconds (0 = the call's timeout, the default)"); err != nil {
			return s, err
		}
	}
	return s, nil
}

// nonNegative sets *dst to an optional limit that must not be negative;
// absent (nil) keeps the default in *dst. msg says the unit and default.
func nonNegative[T int | int64](dst *T, v *T, key, msg string) error {
	if v == nil {
		return nil
	}
	if *v < 0 {
		return &Error{Key: key, Msg: msg}
	}
	*dst = *v
	return nil
}

// nonNegativeMillis is nonNegative for a limit given in milliseconds.
func nonNegativeMillis(dst *time.Duration, v *int64, key, msg string) error {
	var ms int64
	if v == nil {
		return nil
	}
	if err := nonNegative(&ms, v, key, msg); err != nil {
		return err
	}
	*dst = time.Duration(ms) * time.Millisecond
	return nil
}
