package builtin_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/builtin"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

func BenchmarkResolve(b *testing.B) {
	dir, _ := filepath.EvalSymlinks(b.TempDir())
	if err := os.MkdirAll(filepath.Join(dir, "src/pkg/deep"), 0o755); err != nil {
		b.Fatal(err)
	}
	ws, err := builtin.NewWorkspace(dir)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := ws.Resolve("src/pkg/deep/file.go"); err != nil {
			b.Fatal(err)
		}
	}
}

func benchTool(b *testing.B, name, args string, setup func(dir string)) {
	benchToolConfig(b, builtin.Config{Enabled: true}, name, args, setup)
}

func benchToolConfig(b *testing.B, cfg builtin.Config, name, args string, setup func(dir string)) {
	dir, _ := filepath.EvalSymlinks(b.TempDir())
	if setup != nil {
		setup(dir)
	}
	tools, err := builtin.Tools(cfg, sources.Env{Workspace: dir})
	if err != nil {
		b.Fatal(err)
	}
	var tl tool.Tool
	for _, x := range tools {
		if x.Name == name {
			tl = x
		}
	}
	call := tool.Call{Name: name, Arguments: json.RawMessage(args)}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if res := tl.Execute(ctx, call); res.IsError {
			b.Fatal(res.Output)
		}
	}
}

func BenchmarkRead(b *testing.B) {
	benchTool(b, "read", `{"path": "f.txt", "offset": 2, "limit": 1}`, func(dir string) {
		os.WriteFile(filepath.Join(dir, "f.txt"), []byte("alpha\nbeta\nalpha\n"), 0o644)
	})
}

func BenchmarkTodowrite(b *testing.B) {
	benchTool(b, "todowrite", `{"todos":[{"id":"1","text":"a","completed":true},{"id":"2","text":"b"}]}`, nil)
}

func BenchmarkBash(b *testing.B) {
	benchTool(b, "bash", `{"command": "true"}`, nil)
}

// BenchmarkWebfetch is one webfetch of a small page from a server on
// 127.0.0.1 (allowed by allowHosts): the dial's address check included.
func BenchmarkWebfetch(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "hello")
	}))
	defer srv.Close()
	cfg := builtin.Config{Enabled: true, Webfetch: builtin.WebfetchConfig{AllowHosts: []string{"127.0.0.1"}}}
	benchToolConfig(b, cfg, "webfetch", `{"url": "`+srv.URL+`/", "format": "text"}`, nil)
}
