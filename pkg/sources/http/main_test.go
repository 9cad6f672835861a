package http_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/internal/testutil"

	"go.uber.org/goleak"

	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	httpsrc "github.com/toolnexus/toolnexus/pkg/sources/http"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// seen is what the test API received.
type seen struct {
	Method      string `json:"method"`
	Path        string `json:"path"`
	Query       string `json:"query"`
	ContentType string `json:"contentType"`
	Body        string `json:"body"`
	Auth        string `json:"auth"`
	RequestID   string `json:"requestId"`
}

// api is a real HTTP server on 127.0.0.1 that answers every request with
// a JSON description of it, except for a few special paths.
type api struct {
	*httptest.Server
	arrived chan struct{} // one value per request to /slow
}

func newAPI(t testing.TB) *api {
	t.Helper()
	a := &api{arrived: make(chan struct{}, 8)}
	mux := http.NewServeMux()
	mux.HandleFunc("/status/{code}", func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(r.PathValue("code"))
		w.WriteHeader(code)
		io.WriteString(w, "nope")
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		a.arrived <- struct{}{}
		<-r.Context().Done() // answers only when the client gives up
	})
	mux.HandleFunc("/json", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "{ \"a\" : [1, 2],\n  \"b\": \"x\" }")
	})
	mux.HandleFunc("/latin1", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "{\"name\": \"caf\xe9\"}") // valid JSON to encoding/json, but not UTF-8
	})
	mux.HandleFunc("/text/{body}", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.PathValue("body"))
	})
	mux.HandleFunc("/spec/{file}", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != "spec-key" {
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		http.ServeFile(w, r, "testdata/"+r.PathValue("file"))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(seen{
			Method: r.Method, Path: r.URL.EscapedPath(), Query: r.URL.RawQuery,
			ContentType: r.Header.Get("Content-Type"), Body: string(body),
			Auth: r.Header.Get("Authorization"), RequestID: r.Header.Get("X-Request-Id"),
		})
	})
	a.Server = httptest.NewServer(mux)
	t.Cleanup(a.Close)
	return a
}

type syncBuffer = testutil.Buffer

func parse(t testing.TB, httpJSON, openapiJSON string) httpsrc.Config {
	t.Helper()
	var h, o json.RawMessage
	if httpJSON != "" {
		h = json.RawMessage(httpJSON)
	}
	if openapiJSON != "" {
		o = json.RawMessage(openapiJSON)
	}
	cfg, _, err := httpsrc.ParseConfig(h, o)
	if err != nil {
		t.Fatalf("ParseConfig: %v", err)
	}
	return cfg
}

// start runs the source into a fresh registry and closes it after the test.
func start(t testing.TB, cfg httpsrc.Config, env sources.Env) (*registry.Registry, sources.Source, error) {
	t.Helper()
	if env.Logger == nil {
		env.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	reg := registry.New(registry.WithLogger(env.Logger))
	src := httpsrc.New(cfg, env)
	t.Cleanup(func() { src.Close(context.Background()) })
	err := src.Start(context.Background(), reg)
	return reg, src, err
}

func mustStart(t *testing.T, cfg httpsrc.Config) *registry.Registry {
	t.Helper()
	reg, _, err := start(t, cfg, sources.Env{})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	return reg
}

func call(t *testing.T, reg *registry.Registry, name, args string) tool.Result {
	t.Helper()
	return testutil.Direct{Reg: reg}.Execute(context.Background(), name, tool.Call{Arguments: json.RawMessage(args)})
}

// echoed decodes the test API's description of the request it got.
func echoed(t *testing.T, res tool.Result) seen {
	t.Helper()
	if res.IsError {
		t.Fatalf("call failed: %s", res.Output)
	}
	var s seen
	if err := json.Unmarshal([]byte(res.Output), &s); err != nil {
		t.Fatalf("output is not the echo: %q", res.Output)
	}
	return s
}

func q(s string) string { return strconv.Quote(s) }

func contains(t *testing.T, what, haystack, needle string) {
	t.Helper()
	if !strings.Contains(haystack, needle) {
		t.Errorf("%s = %q, want it to contain %q", what, haystack, needle)
	}
}

func envWithCap(n int) sources.Env { return sources.Env{MaxOutputBytes: n} }
