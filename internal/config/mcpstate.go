package config

import (
	"bytes"
	"os"
	"path/filepath"
)

// MinStateKeyBytes is the shortest server.mcp.stateKeyFile accepted.
const MinStateKeyBytes = 32

// MCPStateKey reads server.mcp.stateKeyFile (nil when unset); an error
// names the key.
func (c *Config) MCPStateKey() ([]byte, error) {
	f := c.Server.MCP.StateKeyFile
	if f == "" {
		return nil, nil
	}
	if !filepath.IsAbs(f) {
		f = filepath.Join(c.BaseDir, f)
	}
	key, err := os.ReadFile(f)
	if err != nil {
		return nil, keyErr("server.mcp.stateKeyFile", "%v", err)
	}
	key = bytes.TrimSpace(key)
	if len(key) < MinStateKeyBytes {
		return nil, keyErr("server.mcp.stateKeyFile", "%s holds %d bytes; it needs at least %d (e.g. head -c 48 /dev/urandom | base64 > %s)", f, len(key), MinStateKeyBytes, f)
	}
	return key, nil
}

// MCPStateless is whether /mcp runs stateless (server.mcp.stateless): the
// one place the gateway's mode is decided. Unset, it follows
// sessions.shared — replicas sharing a session volume are meant to answer
// any request, which a stateful /mcp (its sessions in one replica's
// memory) cannot.
func (c *Config) MCPStateless() bool {
	if s := c.Server.MCP.Stateless; s != nil {
		return *s
	}
	return c.Sessions.Shared
}
