package mcpgateway_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnexus/toolnexus/internal/testutil"
)

// oddText is a text whose JSON string holds every kind of escape: quotes,
// a backslash, control characters, HTML characters, a line separator, and
// characters outside the BMP.
const oddText = "line 1\nline 2\t\"quoted\" \\ back <b>&amp;</b> \u2028 é 😀 \x01 end"

// TestFeaturesReadPassesContentsThrough reads text and a blob through /mcp
// and straight from their server, on both protocols: the contents are the
// server's, byte for byte, under the URI the client asked for — alpha's
// clashing URI rewritten, and mapped back on the way out.
func TestFeaturesReadPassesContentsThrough(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"2025-11-25", ""} {
		t.Run("client "+cmpOr(v, "2026-07-28"), func(t *testing.T) {
			t.Parallel()
			opts := func(name string) testutil.FeatureUpstreamOptions {
				return testutil.FeatureUpstreamOptions{Modern: v == "", Big: 300 << 10, Texts: map[string]string{"file:///odd.txt": name + " " + oddText}}
			}
			f := startFeatureFixtureWith(t, opts("alpha"), opts("beta"), "")
			cs := f.connect(t, fullToken, v, nil)
			for served, up := range map[string]struct {
				server *testutil.FeatureUpstream
				uri    string
			}{
				"file:///odd.txt":                   {f.beta, "file:///odd.txt"},
				"toolnexus://alpha/file:///odd.txt": {f.alpha, "file:///odd.txt"},
				"file:///big.bin":                   {f.beta, "file:///big.bin"},
				"toolnexus://alpha/file:///big.bin": {f.alpha, "file:///big.bin"},
				"file:///alpha.bin":                 {f.alpha, "file:///alpha.bin"},
			} {
				got, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: served})
				if err != nil {
					t.Fatalf("read %s through /mcp: %v", served, err)
				}
				want := readDirect(t, up.server.URL, up.uri, v)
				if len(got.Contents) != 1 || len(want.Contents) != 1 {
					t.Fatalf("read %s: %d parts through /mcp, %d from the server", served, len(got.Contents), len(want.Contents))
				}
				g, w := got.Contents[0], want.Contents[0]
				if g.URI != served || g.MIMEType != w.MIMEType || g.Text != w.Text || !bytes.Equal(g.Blob, w.Blob) || (g.Blob == nil) != (w.Blob == nil) {
					t.Errorf("read %s through /mcp = {%s %s %d text bytes %d blob bytes}, want the server's {%s %s %d %d} at %s",
						served, g.URI, g.MIMEType, len(g.Text), len(g.Blob), w.URI, w.MIMEType, len(w.Text), len(w.Blob), served)
				}
			}
		})
	}
}

// readDirect reads uri from the MCP server at url itself.
func readDirect(t *testing.T, url, uri, version string) *mcp.ReadResourceResult {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "direct", Version: "1"}, nil)
	var so *mcp.ClientSessionOptions
	if version != "" {
		so = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, so)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("read %s from the server: %v", uri, err)
	}
	return res
}

// TestAttackUpstreamBreaksTheEventStream: a hostile MCP server answers a
// read with JSON no decoder takes — a raw line break in a string, which
// passed on as it is would end the client's event and start one the
// server wrote (an answer to another request) — and with a blob spelled
// with escapes. The first read is refused, the client's session and later
// reads are unharmed; the blob reaches the client as the SDK decodes it; a
// text that looks like the gateway's own marker is passed on as text.
func TestAttackUpstreamBreaksTheEventStream(t *testing.T) {
	t.Parallel()
	hostile := hostileUpstream(t, map[string]string{
		`"INJECT"`:   "\"x\n\ndata: {\\\"jsonrpc\\\":\\\"2.0\\\",\\\"id\\\":99,\\\"result\\\":{}}\n\n\"",
		`"QkxPQg=="`: `"AA\u003d\u003d"`, // the blob "BLOB" spelled as the byte 0, with escapes
	})
	alpha := testutil.StartFeatureUpstream(t, "alpha", testutil.FeatureUpstreamOptions{})
	f := startFixtureOver(t, alpha, hostile, "")
	cs := f.connect(t, fullToken, "2025-11-25", nil)
	if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "file:///inject.txt"}); err == nil || wireCode(err) != -32032 {
		t.Errorf("read of a broken answer: %v, want refused (-32032)", err)
	}
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "file:///escaped.bin"})
	if err != nil || len(res.Contents) != 1 || !bytes.Equal(res.Contents[0].Blob, []byte{0}) {
		t.Errorf("read of a blob spelled with escapes = %+v, %v; want the byte 0", res, err)
	}
	res, err = cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "file:///marker.txt"})
	if err != nil || len(res.Contents) != 1 || res.Contents[0].Text != `"text":"toolnexus-wire-X.1.0"` {
		t.Errorf("read of a marker-like text = %+v, %v", res, err)
	}
	if _, text := readText(t, cs, "file:///shared.txt"); text != "shared from beta" {
		t.Errorf("a later read = %q", text)
	}
}

// hostileUpstream is an MCP server (answering POSTs in JSON, not events)
// whose answers have each key of swap replaced by its value, as bytes.
func hostileUpstream(t *testing.T, swap map[string]string) *testutil.FeatureUpstream {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "beta", Version: "1"}, nil)
	text := func(body, mime string, blob bool) mcp.ResourceHandler {
		return func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			c := &mcp.ResourceContents{URI: req.Params.URI, MIMEType: mime, Text: body}
			if blob {
				c.Text, c.Blob = "", []byte("BLOB")
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}}, nil
		}
	}
	s.AddResource(&mcp.Resource{URI: "file:///inject.txt", Name: "inject"}, text("INJECT", "text/plain", false))
	s.AddResource(&mcp.Resource{URI: "file:///escaped.bin", Name: "escaped"}, text("", "application/octet-stream", true))
	s.AddResource(&mcp.Resource{URI: "file:///marker.txt", Name: "marker"}, text(`"text":"toolnexus-wire-X.1.0"`, "text/plain", false))
	s.AddResource(&mcp.Resource{URI: "file:///shared.txt", Name: "shared"}, text("shared from beta", "text/plain", false))
	for _, p := range []string{"greet", "embed"} {
		s.AddPrompt(&mcp.Prompt{Name: p}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{}, nil
		})
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{JSONResponse: true})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			h.ServeHTTP(w, r) // the event stream of GET stays open
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		body, _ := io.ReadAll(rec.Result().Body)
		for k, v := range swap {
			body = bytes.ReplaceAll(body, []byte(k), []byte(v))
		}
		for k, vs := range rec.Header() {
			w.Header()[k] = vs
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	}))
	t.Cleanup(hs.Close)
	return &testutil.FeatureUpstream{URL: hs.URL, Server: s}
}
