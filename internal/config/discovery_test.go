package config_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/internal/config"
)

func TestMCPDiscoveryIsChecked(t *testing.T) {
	for _, tc := range []struct {
		name, mcp, key, msg string
	}{
		{"unknown mode", `"discovery": "lazy"`, "server.mcp.discovery", `use "list"`},
		{"pinned without search", `"pinned": ["fs_*"]`, "server.mcp.pinned", `discovery: "search"`},
		{"bad pinned glob", `"discovery": "search", "pinned": ["fs_*", "["]`, "server.mcp.pinned[1]", "bad glob pattern"},
		{"view name not a path segment", `"views": {"a/b": {"tools": ["x"]}}`, "server.mcp.views.a/b", "not a view name"},
		{"view of no tools", `"views": {"ro": {"tools": []}}`, "server.mcp.views.ro.tools", "is empty"},
		{"bad view glob", `"views": {"ro": {"tools": ["read", "["]}}`, "server.mcp.views.ro.tools[1]", "bad glob pattern"},
		{"unknown view key", `"views": {"ro": {"tool": ["read"]}}`, "server.mcp.views.ro.tool", "unknown key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := config.Parse([]byte(`{"server": {"mcp": {"listen": "127.0.0.1:8080", `+tc.mcp+`}}}`), "", t.TempDir())
			var ce *config.Error
			if !errors.As(err, &ce) || ce.Key != tc.key || !strings.Contains(ce.Msg, tc.msg) {
				t.Fatalf("err = %v, want a config error naming %s", err, tc.key)
			}
		})
	}
	t.Run("views", func(t *testing.T) {
		cfg, err := config.Parse([]byte(`{"server": {"mcp": {"views": {"read-only": {"tools": ["read", "source:github"]}}}}}`), "", t.TempDir())
		if err != nil || len(cfg.Server.MCP.Views["read-only"].Tools) != 2 {
			t.Fatalf("%v %+v", err, cfg)
		}
	})
	t.Run("search with pinned", func(t *testing.T) {
		cfg, err := config.Parse([]byte(`{"server": {"mcp": {"listen": "127.0.0.1:8080", "discovery": "search", "pinned": ["fs_*"]}}}`), "", t.TempDir())
		if err != nil || cfg.Server.MCP.Discovery != "search" || len(cfg.Server.MCP.Pinned) != 1 {
			t.Fatalf("%v %+v", err, cfg)
		}
	})
}
