package config

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// Defaults of the sessions section.
const (
	DefaultSessionIdleTimeout = time.Hour
	DefaultSessionMax         = 1000
	DefaultSessionMaxBytes    = 1 << 30
)

// Sessions is the `sessions` section: a workspace per agent session, each
// created on first use and deleted after it has been idle for IdleTimeout.
type Sessions struct {
	// Required refuses calls that name no session (INVALID_ARGUMENT)
	// instead of running them in the shared workspace.
	Required bool
	// IdleTimeout is how long a session may go unused before its
	// workspace is deleted.
	IdleTimeout time.Duration
	// Max caps the sessions one principal may have at once (0 = no cap).
	Max int
	// MaxBytes is each session's disk quota (0 = no quota).
	MaxBytes int64
	// Root is the directory the sessions' workspaces live in, as written
	// (relative to the config file's directory); empty means beside the
	// workspace, "<workspace>.sessions". See Config.SessionsRoot.
	Root string
	// Shared says Root is one volume every replica mounts (NFSv4, CephFS,
	// ...): any replica serves any session, so the metadata, quota, cap
	// and idle cleanup are kept on the volume under file locks, and /mcp
	// runs stateless. See docs/sessions.md.
	Shared bool
}

func defaultSessions() Sessions {
	return Sessions{IdleTimeout: DefaultSessionIdleTimeout, Max: DefaultSessionMax, MaxBytes: DefaultSessionMaxBytes}
}

func parseSessions(raw json.RawMessage) (Sessions, error) {
	s := defaultSessions()
	if raw == nil {
		return s, nil
	}
	var r struct {
		Required    *bool   `json:"required"`
		IdleTimeout *int64  `json:"idleTimeout"`
		Max         *int    `json:"max"`
		MaxBytes    *int64  `json:"maxBytes"`
		Root        *string `json:"root"`
		Shared      *bool   `json:"shared"`
	}
	if err := strictDecode("sessions", raw, &r); err != nil {
		return s, err
	}
	if r.Required != nil {
		s.Required = *r.Required
	}
	if r.IdleTimeout != nil {
		if *r.IdleTimeout < 1 {
			return s, keyErr("sessions.idleTimeout", "must be at least 1 millisecond (default 3600000, one hour)")
		}
		s.IdleTimeout = time.Duration(*r.IdleTimeout) * time.Millisecond
	}
	if r.Max != nil {
		if *r.Max < 0 {
			return s, keyErr("sessions.max", "must be >= 0 (0 = no cap on sessions per principal)")
		}
		s.Max = *r.Max
	}
	if r.MaxBytes != nil {
		if *r.MaxBytes < 0 {
			return s, keyErr("sessions.maxBytes", "must be >= 0 bytes (0 = no quota)")
		}
		s.MaxBytes = *r.MaxBytes
	}
	if r.Root != nil {
		if strings.TrimSpace(*r.Root) == "" || strings.IndexByte(*r.Root, 0) >= 0 {
			return s, keyErr("sessions.root", "must be a directory path (default: beside the workspace, <workspace>.sessions)")
		}
		s.Root = *r.Root
	}
	if r.Shared != nil {
		s.Shared = *r.Shared
	}
	return s, nil
}

// SessionsSuffix names the default sessions root: the workspace's path
// with this appended, a sibling of the workspace.
const SessionsSuffix = ".sessions"

// WorkspaceDir is builtins.workspace as an absolute path (default
// ./workspace, relative to the config file's directory).
func (c *Config) WorkspaceDir() (string, error) {
	ws := c.Builtins.Workspace
	if ws == "" {
		ws = "workspace"
	}
	abs, err := filepath.Abs(c.Resolve(ws))
	if err != nil {
		return "", &Error{Key: "builtins.workspace", Msg: err.Error()}
	}
	return abs, nil
}

// SessionsRoot is where the sessions' workspaces live, as an absolute
// path: sessions.root, or "<workspace>.sessions" beside the workspace.
// It is never inside the workspace (nor the workspace inside it), so no
// grant of the shared workspace — a command's read-write access, the file
// tools' root — reaches another session's files.
func (c *Config) SessionsRoot() (string, error) {
	ws, err := c.WorkspaceDir()
	if err != nil {
		return "", err
	}
	root := ws + SessionsSuffix
	if c.Sessions.Root != "" {
		if root, err = filepath.Abs(c.Resolve(c.Sessions.Root)); err != nil {
			return "", &Error{Key: "sessions.root", Msg: err.Error()}
		}
	}
	real := func(p string) string {
		// Compare where the paths lead, so a symlink cannot hide one
		// inside the other; a missing path is compared as written.
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		return p
	}
	rr, rw := real(root), real(ws)
	if rr == rw || strings.HasPrefix(rr, rw+string(filepath.Separator)) || rw == "/" {
		return "", &Error{Key: "sessions.root", Msg: fmt.Sprintf("%s is inside the workspace %s, where every call without a session could reach the sessions' files; put it beside the workspace (the default is %s)", root, ws, ws+SessionsSuffix)}
	}
	if strings.HasPrefix(rw, rr+string(filepath.Separator)) || rr == "/" {
		return "", &Error{Key: "sessions.root", Msg: fmt.Sprintf("%s contains the workspace %s; put the sessions beside the workspace (the default is %s)", root, ws, ws+SessionsSuffix)}
	}
	return root, nil
}
