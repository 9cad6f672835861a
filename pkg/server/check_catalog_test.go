package server_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/server"
)

// --check explains the catalog: an override naming no tool and hold mode
// without anyone able to approve are warnings; a summary line says what
// the catalog does.
func TestCheckCatalogWarnings(t *testing.T) {
	t.Parallel()
	dir, write := checkDir(t)
	path := write("catalog.json", `{"mcpServers": {"gh": {"url": "https://gh.example.test/mcp"}},
		"pinning": {"mode": "hold", "dir": "pins"},
		"overrides": {"bash": {"description": "Run a shell command."}, "gh_create_issue": {"name": "file_bug"},
			"gh_create_isue": {"description": "typo"}, "webfetch_x": {"name": "w"}}}`)
	r, err := server.CheckReport(server.Options{ConfigPath: path, Workspace: filepath.Join(dir, "ws")})
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(r.Warnings, "\n")
	for _, w := range []string{`overrides.webfetch_x: no configured source offers a tool named "webfetch_x"`,
		`pinning.mode: "hold" with no auth configured`} {
		if !strings.Contains(all, w) {
			t.Errorf("warnings lack %q:\n%s", w, all)
		}
	}
	for _, w := range []string{"overrides.bash", "overrides.gh_create_issue", "overrides.gh_create_isue"} {
		if strings.Contains(all, w+":") {
			t.Errorf("%s names a tool a source may offer (a builtin, or under the gh_ prefix):\n%s", w, all)
		}
	}
	sum := strings.Join(r.Summary, "\n")
	if !strings.Contains(sum, "catalog: pinning hold, pins in pins; override bash (new description); override gh_create_issue (renamed to file_bug); override gh_create_isue (new description)") {
		t.Errorf("summary:\n%s", sum)
	}
}

// --check explains a named view whose globs match no tool a configured
// source offers; globs a source may satisfy at run time are not reported.
func TestCheckViewMatchingNothing(t *testing.T) {
	t.Parallel()
	dir, write := checkDir(t)
	path := write("views.json", `{"mcpServers": {"gh": {"url": "https://gh.example.test/mcp"}},
		"overrides": {"read": {"name": "read_file"}},
		"server": {"mcp": {"views": {"typo": {"tools": ["bsh"]}, "old-name": {"tools": ["read"]},
			"new-name": {"tools": ["read_file"]}, "by-source": {"tools": ["source:mcp"]}, "mcp-prefix": {"tools": ["gh_create_*"]},
			"no-source": {"tools": ["source:a2a"]}}}}}`)
	r, err := server.CheckReport(server.Options{ConfigPath: path, Workspace: filepath.Join(dir, "ws")})
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(r.Warnings, "\n")
	for _, v := range []string{"typo", "old-name", "no-source"} {
		if !strings.Contains(all, "server.mcp.views."+v+".tools: ") || !strings.Contains(all, "/mcp/"+v+" and the gRPC view") {
			t.Errorf("no warning about the view %s:\n%s", v, all)
		}
	}
	for _, v := range []string{"new-name", "by-source", "mcp-prefix"} {
		if strings.Contains(all, "server.mcp.views."+v+".") {
			t.Errorf("the view %s may serve tools:\n%s", v, all)
		}
	}
}

// A pin store that cannot be written, or lies where the model's file
// tools reach, or holds pins that do not parse: --check refuses it, naming
// pinning.dir, and so does a start.
func TestCheckRefusesAPinStoreThatCannotBeWritten(t *testing.T) {
	t.Parallel()
	dir, write := checkDir(t)
	write("file", "")
	if err := os.MkdirAll(filepath.Join(dir, "corrupt"), 0o700); err != nil {
		t.Fatal(err)
	}
	write("corrupt/pins.json", `{"sources": [`)
	cases := map[string]string{
		"a file":               "file",
		"inside the workspace": "ws/pins",
		"corrupt pins":         "corrupt",
	}
	if os.Getuid() != 0 {
		if err := os.Mkdir(filepath.Join(dir, "ro"), 0o500); err != nil {
			t.Fatal(err)
		}
		cases["not writable"] = "ro"
		cases["not creatable"] = "ro/pins"
	}
	for name, pins := range cases {
		t.Run(name, func(t *testing.T) {
			path := write(strings.ReplaceAll(name, " ", "_")+".json", `{"pinning": {"mode": "hold", "dir": "`+pins+`"}}`)
			opts := server.Options{ConfigPath: path, Workspace: filepath.Join(dir, "ws")}
			_, err := server.Check(opts)
			var ce *server.ConfigError
			if !errors.As(err, &ce) || ce.Key != "pinning.dir" {
				t.Fatalf("Check: %v, want a config error naming pinning.dir", err)
			}
			if _, err := server.New(opts); !errors.As(err, &ce) || ce.Key != "pinning.dir" {
				t.Fatalf("New: %v, want a config error naming pinning.dir", err)
			}
		})
	}
}
