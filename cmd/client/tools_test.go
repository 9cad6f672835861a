package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// tableNames returns the first column of a table, header dropped.
func tableNames(t *testing.T, table string) []string {
	t.Helper()
	lines := strings.Split(strings.TrimRight(table, "\n"), "\n")
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "NAME") {
		t.Fatalf("no NAME header:\n%s", table)
	}
	var names []string
	for _, l := range lines[1:] {
		names = append(names, strings.Fields(l)[0])
	}
	return names
}

func TestList(t *testing.T) {
	srv := startServer(t, debugOnly, nativeEcho("Zeta"), nativeEcho("alpha"), nativeEcho("debug_zz"))

	// Other sources (the skill tool...) may be on: look at debug and custom only.
	out := against(t, srv, "list", "--source", "debug,custom").want(t, 0).stdout
	want := []string{"Zeta", "alpha", "debug_echo", "debug_fail", "debug_panic", "debug_sleep", "debug_zz"} // byte order
	if got := tableNames(t, out); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("list names = %v, want %v", got, want)
	}
	if !strings.Contains(out, "alpha ") || !strings.Contains(out, "custom") || !strings.Contains(out, "Echo for alpha. …") {
		t.Errorf("want source and the description's first line cut with …:\n%s", out)
	}
	if strings.Contains(out, "Second line") {
		t.Errorf("table shows a description's second line:\n%s", out)
	}

	t.Run("source filter", func(t *testing.T) {
		out := against(t, srv, "list", "--source", "debug").want(t, 0).stdout
		if got := tableNames(t, out); fmt.Sprint(got) != "[debug_echo debug_fail debug_panic debug_sleep]" {
			t.Fatalf("--source debug = %v", got)
		}
		out = against(t, srv, "list", "--source", "custom", "--source", "debug", "--name", "alpha,debug_echo").want(t, 0).stdout
		if got := tableNames(t, out); fmt.Sprint(got) != "[alpha debug_echo]" {
			t.Fatalf("--source custom --source debug --name alpha,debug_echo = %v", got)
		}
		out = against(t, srv, "list", "--source", "nosuch").want(t, 0).stdout
		if got := tableNames(t, out); len(got) != 0 {
			t.Fatalf("unknown source lists %v, want nothing", got)
		}
	})

	t.Run("json", func(t *testing.T) {
		// --json works before and after the command.
		for _, args := range [][]string{{"list", "--json", "--source", "debug,custom"}, {"--json", "list", "--source", "debug,custom"}} {
			var doc struct {
				Revision string `json:"revision"`
				Tools    []struct {
					Name        string         `json:"name"`
					Source      string         `json:"source"`
					Description string         `json:"description"`
					InputSchema map[string]any `json:"input_schema"`
				} `json:"tools"`
			}
			out := against(t, srv, args...).want(t, 0).stdout
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatalf("%v: not JSON: %v\n%s", args, err, out)
			}
			if len(doc.Tools) != len(want) || doc.Tools[0].Name != "Zeta" || doc.Tools[0].InputSchema["type"] != "object" {
				t.Fatalf("%v: tools = %+v", args, doc.Tools)
			}
			if doc.Revision == "" || doc.Revision == "0" {
				t.Errorf("%v: revision %q, want the registry revision", args, doc.Revision)
			}
		}
	})
}

func TestListPagesThroughEveryPage(t *testing.T) {
	// 2,500 tools is three pages at the server's default page size of 1,000.
	const n = 2500
	native := make([]tool.Tool, n)
	for i := range native {
		native[i] = tool.Must(tool.Native(fmt.Sprintf("t%05d", i), func(_ context.Context, _ map[string]any) (any, error) { return "", nil }))
	}
	srv := startServer(t, debugOnly, native...)
	names := tableNames(t, against(t, srv, "list", "--source", "custom").want(t, 0).stdout)
	if len(names) != n || names[0] != "t00000" || names[n-1] != fmt.Sprintf("t%05d", n-1) || !sort.StringsAreSorted(names) {
		t.Fatalf("got %d names (first %q, last %q), want %d sorted", len(names), names[0], names[len(names)-1], n)
	}
}

func TestDescribe(t *testing.T) {
	srv := startServer(t, debugOnly)
	out := against(t, srv, "describe", "debug_sleep").want(t, 0).stdout
	for _, want := range []string{"Name:    debug_sleep\n", "Source:  debug\n", "Input schema:\n{\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("describe lacks %q:\n%s", want, out)
		}
	}
	_, schema, _ := strings.Cut(out, "Input schema:\n")
	var s struct {
		Required []string `json:"required"`
	}
	if err := json.Unmarshal([]byte(schema), &s); err != nil || fmt.Sprint(s.Required) != "[ms]" {
		t.Fatalf("schema %q: %v, required %v", schema, err, s.Required)
	}

	var tl struct {
		Name        string         `json:"name"`
		InputSchema map[string]any `json:"input_schema"`
	}
	out = against(t, srv, "describe", "--json", "debug_echo").want(t, 0).stdout
	if err := json.Unmarshal([]byte(out), &tl); err != nil || tl.Name != "debug_echo" || tl.InputSchema["type"] != "object" {
		t.Fatalf("describe --json: %v %+v\n%s", err, tl, out)
	}

	r := against(t, srv, "describe", "nosuch").want(t, 1)
	if !strings.Contains(r.stderr, "toolnexus describe: NotFound: ") || !strings.Contains(r.stderr, `"nosuch"`) {
		t.Errorf("stderr = %q, want the NotFound status message", r.stderr)
	}
}

func TestExport(t *testing.T) {
	srv := startServer(t, debugOnly)
	cases := []struct {
		format string
		names  func(doc []map[string]any) []string
	}{
		{"openai", func(doc []map[string]any) (out []string) {
			for _, d := range doc {
				if d["type"] != "function" {
					return nil
				}
				fn := d["function"].(map[string]any)
				if _, ok := fn["parameters"].(map[string]any); !ok {
					return nil
				}
				out = append(out, fn["name"].(string))
			}
			return out
		}},
		{"anthropic", func(doc []map[string]any) (out []string) {
			for _, d := range doc {
				if _, ok := d["input_schema"].(map[string]any); !ok {
					return nil
				}
				out = append(out, d["name"].(string))
			}
			return out
		}},
		{"GEMINI", func(doc []map[string]any) (out []string) {
			if len(doc) != 1 {
				return nil
			}
			for _, d := range doc[0]["functionDeclarations"].([]any) {
				out = append(out, d.(map[string]any)["name"].(string))
			}
			return out
		}},
	}
	for _, tc := range cases {
		t.Run(tc.format, func(t *testing.T) {
			out := against(t, srv, "export", "--format", tc.format, "--name", "debug_echo,debug_fail").want(t, 0).stdout
			var doc []map[string]any
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, out)
			}
			if got := tc.names(doc); fmt.Sprint(got) != "[debug_echo debug_fail]" {
				t.Fatalf("%s export names = %v\n%s", tc.format, got, out)
			}
		})
	}
}

// lineWriter hands each write to the test as it happens, so the test can
// act once the watch has printed its first revision.
type lineWriter struct {
	mu     sync.Mutex
	buf    strings.Builder
	writes chan string
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.buf.Write(p)
	w.mu.Unlock()
	select {
	case w.writes <- string(p):
	default:
	}
	return len(p), nil
}

func (w *lineWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

func TestWatch(t *testing.T) {
	srv := startServer(t, debugOnly)

	t.Run("first snapshot", func(t *testing.T) {
		out := against(t, srv, "watch", "--count", "1", "--source", "debug").want(t, 0).stdout
		if !strings.HasPrefix(out, "revision ") || !strings.Contains(out, "(snapshot, 4 tools)\n") || !strings.Contains(out, "+debug_echo\n+debug_fail\n") {
			t.Fatalf("watch --count 1:\n%s", out)
		}
	})

	t.Run("timeout ends it cleanly", func(t *testing.T) {
		// An explicit --timeout bounds a watch and is a normal end, not a failure.
		r := against(t, srv, "--timeout", "1s", "watch", "--source", "debug").want(t, 0)
		if !strings.Contains(r.stdout, "(snapshot, 4 tools)") {
			t.Fatalf("stdout:\n%s", r.stdout)
		}
	})

	t.Run("sees a change", func(t *testing.T) {
		w := &lineWriter{writes: make(chan string, 1)}
		done := make(chan int, 1)
		go func() {
			done <- runContext(t.Context(), strings.NewReader(""),
				[]string{"--addr", srv.Addr().String(), "watch", "--count", "2", "--source", "debug,custom"}, w, io.Discard)
		}()
		select {
		case <-w.writes: // the snapshot has arrived: the stream is registered
		case code := <-done:
			t.Fatalf("watch ended before its first revision: exit %d", code)
		}
		layer := registry.LayerID{Kind: sources.KindNative, Name: "watch-test"}
		if err := srv.Registry().Replace(layer, []tool.Tool{nativeEcho("added_tool")}); err != nil {
			t.Fatal(err)
		}
		if code := <-done; code != 0 {
			t.Fatalf("exit %d\n%s", code, w.String())
		}
		out := w.String()
		if !strings.Contains(out, "(change, 5 tools)\n+added_tool\n") {
			t.Fatalf("second revision missing +added_tool:\n%s", out)
		}
	})

	t.Run("json lines", func(t *testing.T) {
		out := against(t, srv, "--json", "watch", "--count", "1", "--name", "debug_echo").want(t, 0).stdout
		lines := strings.Split(strings.TrimSpace(out), "\n")
		var msg struct {
			Snapshot bool     `json:"snapshot"`
			Added    []string `json:"added"`
		}
		if len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &msg) != nil || !msg.Snapshot || fmt.Sprint(msg.Added) != "[debug_echo]" {
			t.Fatalf("want one JSON line with the snapshot, got:\n%s", out)
		}
	})
}
