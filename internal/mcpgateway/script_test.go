package mcpgateway_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/core"
	"github.com/toolnexus/toolnexus/internal/mcpgateway"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// TestScripts runs every testdata/script/*.txtar against a gateway over a
// real core, through a real HTTP server on loopback. A script is a txtar
// archive, its comment saying what it shows, its files in order:
//
//	-- config.json --        the core's config (config.Parse)
//	-- gateway.json --       optional: {"name", "version"} (Options)
//	-- post [token=T] [header=K:V] --
//	<one JSON-RPC message>
//	-- want [status=N] --
//	<the JSON-RPC messages the POST answers, in order (one when the
//	 response is JSON, every event's data when it is an event stream);
//	 nothing for a notification (202); for a status other than 200, text
//	 the response body must contain>
//
// Expected JSON is compared semantically: same keys, same values, in any
// key order; the string "$ANY" matches any value. The Mcp-Session-Id the
// initialize response returns is sent on every later POST, as a client
// would.
func TestScripts(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/script/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			t.Parallel()
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			runScript(t, ar)
		})
	}
}

// scriptTools are the embedding program's tools every script's core serves
// beside the config's: one that reports progress and logs while it runs.
func scriptTools() []tool.Tool {
	return []tool.Tool{tool.Must(tool.New("report", func(ctx context.Context, c tool.Call) tool.Result {
		tool.Progress(ctx, 1, 2, "half way")
		tool.Progress(ctx, 2, 2, "done")
		tool.Log(ctx, "info", "report", "logged")
		return tool.Result{Output: "reported"}
	}, tool.WithDescription("Report progress twice and log once, then return."), tool.WithInputSchema(json.RawMessage(`{"type":"object"}`))))}
}

// scriptServer is one script's gateway, on loopback, over its own core.
type scriptServer struct {
	url     string
	session string // Mcp-Session-Id, once initialize returned one
}

func startScriptServer(t *testing.T, ar *txtar.Archive) *scriptServer {
	t.Helper()
	cfgJSON, gwJSON := []byte(`{"builtins": false}`), []byte(`{}`)
	for _, f := range ar.Files {
		switch f.Name {
		case "config.json":
			cfgJSON = f.Data
		case "gateway.json":
			gwJSON = f.Data
		}
	}
	dir := t.TempDir()
	cfg, err := config.Parse(cfgJSON, filepath.Join(dir, "config.json"), dir)
	if err != nil {
		t.Fatalf("config.json: %v", err)
	}
	log := slog.New(slog.DiscardHandler)
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	c, err := core.New(cfg, core.Options{Logger: log, Native: scriptTools()})
	if err != nil {
		t.Fatal(err)
	}
	var opts mcpgateway.Options
	if err := json.Unmarshal(gwJSON, &opts); err != nil {
		t.Fatalf("gateway.json: %v", err)
	}
	opts.Logger = log
	if opts.Version == "" {
		opts.Version = "test"
	}
	return &scriptServer{url: serveGateway(t, c, opts) + mcpgateway.Path}
}

// serveGateway serves a gateway over c on loopback until the test ends,
// then closes it and c; it returns the server's URL.
func serveGateway(t *testing.T, c *core.Core, opts mcpgateway.Options) string {
	t.Helper()
	g := mcpgateway.New(c, opts)
	hs := httptest.NewServer(g)
	t.Cleanup(func() {
		hs.Close()
		g.Close()
		if err := c.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return hs.URL
}

func runScript(t *testing.T, ar *txtar.Archive) {
	s := startScriptServer(t, ar)
	var pending *http.Response
	var step string
	for _, f := range ar.Files {
		word, args, _ := strings.Cut(f.Name, " ")
		switch word {
		case "config.json", "gateway.json":
		case "post":
			if pending != nil {
				t.Fatalf("%s: a post without a want", step)
			}
			step = f.Name
			pending = s.post(t, args, f.Data)
		case "want":
			if pending == nil {
				t.Fatalf("want %q: nothing was posted", args)
			}
			checkResponse(t, step, pending, args, f.Data)
			pending.Body.Close()
			pending = nil
		default:
			t.Fatalf("unknown script file %q", f.Name)
		}
	}
	if pending != nil {
		t.Fatalf("%s: no want follows it", step)
	}
}

// post sends one message; args are "token=T" and "header=K:V" words.
func (s *scriptServer) post(t *testing.T, args string, body []byte) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if s.session != "" {
		req.Header.Set("Mcp-Session-Id", s.session)
	}
	for _, a := range strings.Fields(args) {
		k, v, _ := strings.Cut(a, "=")
		switch k {
		case "token":
			req.Header.Set("Authorization", "Bearer "+v)
		case "header":
			hk, hv, _ := strings.Cut(v, ":")
			req.Header.Set(hk, hv)
		default:
			t.Fatalf("post: unknown argument %q", a)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		s.session = id
	}
	return resp
}

func checkResponse(t *testing.T, step string, resp *http.Response, args string, want []byte) {
	t.Helper()
	status := http.StatusOK
	if v, ok := strings.CutPrefix(args, "status="); ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("want %q: %v", args, err)
		}
		status = n
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: reading the response: %v", step, err)
	}
	if status == http.StatusOK && resp.StatusCode == http.StatusAccepted && len(bytes.TrimSpace(want)) == 0 {
		return // a notification, accepted
	}
	if resp.StatusCode != status {
		t.Fatalf("%s: status %d, want %d; body: %s", step, resp.StatusCode, status, body)
	}
	if status != http.StatusOK {
		if w := strings.TrimSpace(string(want)); !strings.Contains(string(body), w) {
			t.Errorf("%s: body %q does not contain %q", step, body, w)
		}
		return
	}
	got := messages(t, step, resp.Header.Get("Content-Type"), body)
	exp := decodeAll(t, step+" (want)", want)
	if len(got) != len(exp) {
		t.Fatalf("%s: %d messages, want %d:\n%s", step, len(got), len(exp), body)
	}
	for i := range exp {
		if path, ok := matchJSON(exp[i], got[i], "$"); !ok {
			g, _ := json.MarshalIndent(got[i], "", "  ")
			t.Errorf("%s: message %d differs at %s; got:\n%s", step, i, path, g)
		}
	}
}

// messages are the JSON-RPC messages of a response: the body itself, or
// the data of each server-sent event.
func messages(t *testing.T, step, contentType string, body []byte) []any {
	t.Helper()
	if !strings.HasPrefix(contentType, "text/event-stream") {
		return decodeAll(t, step, body)
	}
	var out []any
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, decodeAll(t, step, []byte(data))...)
		}
	}
	return out
}

func decodeAll(t *testing.T, what string, b []byte) []any {
	t.Helper()
	var out []any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	for {
		var v any
		if err := dec.Decode(&v); err == io.EOF {
			return out
		} else if err != nil {
			t.Fatalf("%s: %v in %s", what, err, b)
		}
		out = append(out, v)
	}
}

// matchJSON reports whether got matches want ("$ANY" matches anything),
// and where it first does not.
func matchJSON(want, got any, path string) (string, bool) {
	if want == "$ANY" {
		return "", true
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return path, false
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				return path + "." + k + " (unexpected)", false
			}
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok {
				return path + "." + k + " (missing)", false
			}
			if p, ok := matchJSON(wv, gv, path+"."+k); !ok {
				return p, false
			}
		}
		return "", true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return path + fmt.Sprintf(" (length %d)", len(w)), false
		}
		for i := range w {
			if p, ok := matchJSON(w[i], g[i], fmt.Sprintf("%s[%d]", path, i)); !ok {
				return p, false
			}
		}
		return "", true
	}
	return path, reflect.DeepEqual(want, got)
}
