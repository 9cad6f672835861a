package mcpgateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
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
			cs, seen := f.connectRecording(t, v)
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
				seen.reset()
				got, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: served})
				if err != nil {
					t.Fatalf("read %s through /mcp: %v", served, err)
				}
				want, sent := readDirect(t, up.server.URL, up.uri, v)
				if g, w := seen.answer(t), sent.answer(t); g.ResultType != w.ResultType || len(g.Contents) != 1 ||
					!bytes.Equal(g.Contents[0]["text"], w.Contents[0]["text"]) || !bytes.Equal(g.Contents[0]["blob"], w.Contents[0]["blob"]) {
					t.Errorf("read %s: /mcp sent resultType %q and %.80s, the server %q and %.80s", served, g.ResultType, g.Contents, w.ResultType, w.Contents)
				} else if v == "" && g.ResultType != "complete" {
					t.Errorf("read %s at 2026-07-28: resultType %q, want complete", served, g.ResultType)
				}
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

// readDirect reads uri from the MCP server at url itself, recording what
// it sent.
func readDirect(t *testing.T, url, uri, version string) (*mcp.ReadResourceResult, *recorder) {
	t.Helper()
	rec := &recorder{next: http.DefaultTransport}
	cs := connectWith(t, url, version, rec)
	defer cs.Close()
	rec.reset()
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("read %s from the server: %v", uri, err)
	}
	return res, rec
}

// connectRecording is connect with the full token, recording what /mcp sends.
func (f *featureFixture) connectRecording(t *testing.T, version string) (*mcp.ClientSession, *recorder) {
	rec := &recorder{next: bearer{fullToken}}
	cs := connectWith(t, f.url, version, rec)
	t.Cleanup(func() { _ = cs.Close() })
	return cs, rec
}

func connectWith(t *testing.T, url, version string, rt http.RoundTripper) *mcp.ClientSession {
	t.Helper()
	var so *mcp.ClientSessionOptions
	if version != "" {
		so = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: rt}}, so)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// recorder keeps the bodies of the answers to POSTs, as they came.
type recorder struct {
	next http.RoundTripper
	mu   sync.Mutex
	buf  bytes.Buffer
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	if err == nil && req.Method == http.MethodPost {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		r.mu.Lock()
		r.buf.Write(body)
		r.buf.WriteString("\n")
		r.mu.Unlock()
		resp.Body = io.NopCloser(bytes.NewReader(body))
	}
	return resp, err
}

func (r *recorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.buf.Reset()
}

// wireAnswer is a read's answer with each part's members as sent.
type wireAnswer struct {
	ResultType string                       `json:"resultType"`
	Contents   []map[string]json.RawMessage `json:"contents"`
}

// answer is the read's answer among what was recorded since reset.
func (r *recorder) answer(t *testing.T) wireAnswer {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for line := range strings.Lines(r.buf.String()) {
		var msg struct {
			Result *wireAnswer `json:"result"`
		}
		line = strings.TrimPrefix(strings.TrimSpace(line), "data: ")
		if json.Unmarshal([]byte(line), &msg) == nil && msg.Result != nil && msg.Result.Contents != nil {
			return *msg.Result
		}
	}
	t.Fatalf("no read answer among %.300q", r.buf.String())
	return wireAnswer{}
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
	// A client naming a response writer itself (the header /mcp uses
	// inside) names nothing: the gateway sets the header on every POST.
	forger := mcp.NewClient(&mcp.Implementation{Name: "forger", Version: "1"}, nil)
	fcs, err := forger.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: f.url,
		HTTPClient: &http.Client{Transport: forgedSlot{bearer{fullToken}}}}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer fcs.Close()
	for _, c := range []*mcp.ClientSession{fcs, cs} {
		if _, text := readText(t, c, "alpha://only"); text != "only alpha" {
			t.Errorf("a read beside a forged writer id = %q", text)
		}
	}
}

// forgedSlot sends the gateway's internal writer header on every request.
type forgedSlot struct{ next http.RoundTripper }

func (f forgedSlot) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Toolnexus-Internal-Wire-Slot", "1")
	return f.next.RoundTrip(r)
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
