package mcpgateway_test

import (
	"context"
	"errors"
	"iter"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/core"
	"github.com/toolnexus/toolnexus/internal/mcpgateway"
	"github.com/toolnexus/toolnexus/internal/testutil"
)

// featureFixture is a gateway over a core whose two MCP servers, alpha and
// beta, clash on a resource URI, a template and a prompt name.
type featureFixture struct {
	url         string
	alpha, beta *testutil.FeatureUpstream
	core        *core.Core
}

const (
	fullToken       = testutil.FeatureFullToken
	restrictedToken = testutil.FeatureRestrictedToken
	forbidden       = testutil.FeatureForbidden
)

func startFeatureFixture(t *testing.T, modern bool, extra string) *featureFixture {
	t.Helper()
	return startFeatureFixtureWith(t, testutil.FeatureUpstreamOptions{Modern: modern}, testutil.FeatureUpstreamOptions{Modern: modern}, extra)
}

// startFeatureFixtureWith is startFeatureFixture with each server's options.
func startFeatureFixtureWith(t *testing.T, alphaOpts, betaOpts testutil.FeatureUpstreamOptions, extra string) *featureFixture {
	t.Helper()
	alpha := testutil.StartFeatureUpstream(t, "alpha", alphaOpts)
	beta := testutil.StartFeatureUpstream(t, "beta", betaOpts)
	return startFixtureOver(t, alpha, beta, extra)
}

// startFixtureOver is startFeatureFixture over the given servers.
func startFixtureOver(t *testing.T, alpha, beta *testutil.FeatureUpstream, extra string) *featureFixture {
	t.Helper()
	return startFixtureOverWith(t, alpha, beta, extra, mcpgateway.Options{})
}

// startFixtureOverWith is startFixtureOver with the gateway's options.
func startFixtureOverWith(t *testing.T, alpha, beta *testutil.FeatureUpstream, extra string, opts mcpgateway.Options) *featureFixture {
	t.Helper()
	dir := t.TempDir()
	cfg, err := config.Parse(testutil.FeatureConfig(t, dir, alpha, beta, extra), filepath.Join(dir, "config.json"), dir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := core.New(cfg, core.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	opts.Version, opts.Logger = "test", slog.New(slog.DiscardHandler)
	g := mcpgateway.New(c, opts)
	hs := httptest.NewServer(g)
	t.Cleanup(func() {
		hs.Close()
		g.Close()
		if err := c.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	f := &featureFixture{url: hs.URL + mcpgateway.Path, alpha: alpha, beta: beta, core: c}
	waitFor(t, "both servers' features", func() bool { return len(c.Features().Prompts()) == 4 })
	return f
}

// waitFor polls cond (a bound for the servers connecting, not a timing
// assertion).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// connect opens a client session with token; version "" is the go-sdk's
// default (2026-07-28).
func (f *featureFixture) connect(t *testing.T, token, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts)
	tr := &mcp.StreamableClientTransport{Endpoint: f.url, HTTPClient: &http.Client{Transport: bearer{token}}}
	var so *mcp.ClientSessionOptions
	if version != "" {
		so = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := client.Connect(context.Background(), tr, so)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// names reads a paged list to its end, one string per item.
func names[T any](t *testing.T, seq iter.Seq2[T, error], name func(T) string) []string {
	t.Helper()
	var out []string
	for x, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, name(x))
	}
	return out
}

func resourceURIs(t *testing.T, cs *mcp.ClientSession) []string {
	return names(t, cs.Resources(context.Background(), nil), func(r *mcp.Resource) string { return r.URI })
}

func templateURIs(t *testing.T, cs *mcp.ClientSession) []string {
	return names(t, cs.ResourceTemplates(context.Background(), nil), func(r *mcp.ResourceTemplate) string { return r.URITemplate })
}

func promptNames(t *testing.T, cs *mcp.ClientSession) []string {
	return names(t, cs.Prompts(context.Background(), nil), func(p *mcp.Prompt) string { return p.Name })
}

func readText(t *testing.T, cs *mcp.ClientSession, uri string) (string, string) {
	t.Helper()
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	if len(res.Contents) != 1 {
		t.Fatalf("read %s: %d contents", uri, len(res.Contents))
	}
	return res.Contents[0].URI, res.Contents[0].Text
}

func wireCode(err error) int64 {
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return we.Code
	}
	return 0
}

// TestFeaturesFromTwoServersWithClashingNames serves two MCP servers'
// resources, templates and prompts at /mcp, on the 2025-11-25 protocol
// (sessions) and on 2026-07-28 (none): the later server (beta) keeps the
// clashing URI, template and its prompts keep their prefix; alpha's clashing
// URI and template are served rewritten and read back from alpha; an
// embedded resource's URI comes back in the served namespace; completion
// goes to the server that owns the prompt or template.
func TestFeaturesFromTwoServersWithClashingNames(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"2025-11-25", ""} {
		t.Run("client "+cmpOr(v, "2026-07-28"), func(t *testing.T) {
			t.Parallel()
			f := startFeatureFixture(t, v == "", "")
			cs := f.connect(t, fullToken, v, nil)
			wantR := []string{"alpha://only", "beta://only", "file:///alpha.bin", "file:///beta.bin", "file:///shared.txt", "toolnexus://alpha/file:///shared.txt"}
			if got := resourceURIs(t, cs); !slices.Equal(got, wantR) {
				t.Errorf("resources/list = %q, want %q", got, wantR)
			}
			wantT := []string{"file:///docs/{name}", "toolnexus://alpha/file:///docs/{name}"}
			if got := templateURIs(t, cs); !slices.Equal(got, wantT) {
				t.Errorf("resources/templates/list = %q, want %q", got, wantT)
			}
			wantP := []string{"alpha_embed", "alpha_greet", "beta_embed", "beta_greet"}
			if got := promptNames(t, cs); !slices.Equal(got, wantP) {
				t.Errorf("prompts/list = %q, want %q", got, wantP)
			}
			for uri, want := range map[string]string{
				"file:///shared.txt":                    "shared from beta",
				"toolnexus://alpha/file:///shared.txt":  "shared from alpha",
				"file:///docs/x":                        "doc x from beta",
				"toolnexus://alpha/file:///docs/readme": "doc readme from alpha",
				"alpha://only":                          "only alpha",
			} {
				gotURI, text := readText(t, cs, uri)
				if text != want || gotURI != uri {
					t.Errorf("read %s = %q at %s, want %q at the same URI", uri, text, gotURI, want)
				}
			}
			if f.alpha.Reads("file:///shared.txt") != 1 {
				t.Errorf("alpha read its file:///shared.txt %d times, want 1", f.alpha.Reads("file:///shared.txt"))
			}
			res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "file:///alpha.bin"})
			if err != nil || len(res.Contents) != 1 || string(res.Contents[0].Blob) != "\x00\x01\x02\xff" {
				t.Errorf("read blob = %+v, %v", res, err)
			}
			checkPrompts(t, cs)
			checkCompletion(t, cs)
		})
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func checkPrompts(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	ctx := context.Background()
	g, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "alpha_greet", Arguments: map[string]string{"who": "ann"}})
	if err != nil || len(g.Messages) != 1 || g.Messages[0].Content.(*mcp.TextContent).Text != "alpha greets ann" {
		t.Errorf("get alpha_greet = %+v, %v", g, err)
	}
	for name, want := range map[string]string{"alpha_embed": "toolnexus://alpha/file:///shared.txt", "beta_embed": "file:///shared.txt"} {
		g, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name})
		if err != nil || len(g.Messages) != 1 {
			t.Fatalf("get %s = %+v, %v", name, g, err)
		}
		if er, ok := g.Messages[0].Content.(*mcp.EmbeddedResource); !ok || er.Resource.URI != want {
			t.Errorf("get %s: embedded %+v, want URI %s (the served one: reading it reaches the same server)", name, g.Messages[0].Content, want)
		}
	}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "alpha_greet"}); wireCode(err) != jsonrpc.CodeInvalidParams {
		t.Errorf("get alpha_greet without its required argument: %v, want invalid params", err)
	}
}

func checkCompletion(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	ctx := context.Background()
	for ref, want := range map[mcp.CompleteReference][]string{
		{Type: "ref/prompt", Name: "alpha_greet"}:                            {"alpha-alice", "alpha-albert"},
		{Type: "ref/prompt", Name: "beta_greet"}:                             {"beta-alice", "beta-albert"},
		{Type: "ref/resource", URI: "file:///docs/{name}"}:                   {"beta-alice", "beta-albert"},
		{Type: "ref/resource", URI: "toolnexus://alpha/file:///docs/{name}"}: {"alpha-alice", "alpha-albert"},
	} {
		res, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &ref, Argument: mcp.CompleteParamsArgument{Name: "who", Value: "al"}})
		if err != nil || !slices.Equal(res.Completion.Values, want) {
			t.Errorf("complete %+v = %+v, %v; want %q", ref, res, err, want)
		}
	}
}

// TestFeaturesHiddenFromARestrictedToken: a token restricted to beta's
// prompts and to beta:// and alpha's resources sees nothing else in any
// list, and reading, getting, completing or subscribing to what it may not
// see answers exactly as for a name that does not exist.
func TestFeaturesHiddenFromARestrictedToken(t *testing.T) {
	t.Parallel()
	f := startFeatureFixture(t, false, "")
	cs := f.connect(t, restrictedToken, "2025-11-25", nil)
	wantR := []string{"alpha://only", "beta://only", "file:///alpha.bin", "toolnexus://alpha/file:///shared.txt"}
	if got := resourceURIs(t, cs); !slices.Equal(got, wantR) {
		t.Errorf("resources/list = %q, want %q", got, wantR)
	}
	if got, want := templateURIs(t, cs), []string{"toolnexus://alpha/file:///docs/{name}"}; !slices.Equal(got, want) {
		t.Errorf("resources/templates/list = %q, want %q", got, want)
	}
	if got, want := promptNames(t, cs), []string{"beta_embed", "beta_greet"}; !slices.Equal(got, want) {
		t.Errorf("prompts/list = %q, want %q", got, want)
	}
	ctx := context.Background()
	for _, uri := range []string{"file:///shared.txt", "file:///beta.bin", "file:///docs/x"} {
		_, hidden := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		_, unknown := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri + "-no-such"})
		if hidden == nil || unknown == nil || strings.ReplaceAll(hidden.Error(), uri, "X") != strings.ReplaceAll(unknown.Error(), uri+"-no-such", "X") {
			t.Errorf("read hidden %s: %v; unknown: %v (must read the same)", uri, hidden, unknown)
		}
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); wireCode(err) != jsonrpc.CodeInvalidParams {
			t.Errorf("subscribe to hidden %s: %v, want resource not found", uri, err)
		}
	}
	_, hidden := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "alpha_greet", Arguments: map[string]string{"who": "x"}})
	_, unknown := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "alpha_nosuch", Arguments: map[string]string{"who": "x"}})
	if hidden == nil || unknown == nil || strings.ReplaceAll(hidden.Error(), "alpha_greet", "X") != strings.ReplaceAll(unknown.Error(), "alpha_nosuch", "X") {
		t.Errorf("get hidden prompt: %v; unknown: %v (must read the same)", hidden, unknown)
	}
	if _, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "alpha_greet"},
		Argument: mcp.CompleteParamsArgument{Name: "who", Value: "a"}}); err == nil {
		t.Error("completing a hidden prompt's argument succeeded")
	}
	if f.alpha.Reads("file:///docs/x") != 0 || f.beta.Reads("file:///docs/x") != 0 {
		t.Error("a hidden resource was read from its server")
	}
}

// TestFeaturesCedarForbidOnAResource: a forbid on Resource::"beta://only"
// refuses reading and subscribing to it, naming the policy, while other
// resources read.
func TestFeaturesCedarForbidOnAResource(t *testing.T) {
	t.Parallel()
	f := startFeatureFixture(t, false, "")
	cs := f.connect(t, fullToken, "2025-11-25", nil)
	ctx := context.Background()
	_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: forbidden})
	if wireCode(err) != mcpgateway.CodeDenied || !strings.Contains(err.Error(), "denied by policy no-beta-only: beta's own resource is off limits") {
		t.Errorf("read %s: %v, want denied by policy no-beta-only", forbidden, err)
	}
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: forbidden}); wireCode(err) != mcpgateway.CodeDenied {
		t.Errorf("subscribe to %s: %v, want denied", forbidden, err)
	}
	if f.beta.Reads(forbidden) != 0 || f.beta.Subscribed(forbidden) != 0 {
		t.Error("the forbidden resource reached its server")
	}
	if _, text := readText(t, cs, "alpha://only"); text != "only alpha" {
		t.Errorf("read alpha://only = %q", text)
	}
}

// TestFeaturesSubscriptionsReachOnlyTheirSubscribers: a client subscribed
// to alpha's rewritten shared.txt hears alpha's change under the served
// URI; a client subscribed to beta's shared.txt does not hear alpha's, and
// hears beta's; each server is subscribed once whatever the number of
// clients, and unsubscribed when the last one leaves or its session ends.
func TestFeaturesSubscriptionsReachOnlyTheirSubscribers(t *testing.T) {
	t.Parallel()
	f := startFeatureFixture(t, false, "")
	heard := func() (chan string, *mcp.ClientOptions) {
		ch := make(chan string, 16)
		return ch, &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { ch <- r.Params.URI }}
	}
	ctx := context.Background()
	aCh, aOpts := heard()
	bCh, bOpts := heard()
	a := f.connect(t, fullToken, "2025-11-25", aOpts)
	b := f.connect(t, fullToken, "2025-11-25", bOpts)
	alphaShared := "toolnexus://alpha/file:///shared.txt"
	for _, s := range []struct {
		cs  *mcp.ClientSession
		uri string
	}{{a, alphaShared}, {b, "file:///shared.txt"}, {a, "file:///shared.txt"}} {
		if err := s.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: s.uri}); err != nil {
			t.Fatalf("subscribe %s: %v", s.uri, err)
		}
	}
	if f.alpha.Subscribed("file:///shared.txt") != 1 || f.beta.Subscribed("file:///shared.txt") != 1 {
		t.Fatalf("servers hold %d and %d subscriptions, want one each", f.alpha.Subscribed("file:///shared.txt"), f.beta.Subscribed("file:///shared.txt"))
	}
	f.alpha.Update("file:///shared.txt")
	if got := <-aCh; got != alphaShared {
		t.Errorf("a heard %s, want %s", got, alphaShared)
	}
	f.beta.Update("file:///shared.txt")
	for _, ch := range []chan string{aCh, bCh} {
		if got := <-ch; got != "file:///shared.txt" {
			t.Errorf("heard %s, want file:///shared.txt", got)
		}
	}
	select {
	case got := <-bCh:
		t.Errorf("b heard %s, which it never subscribed to", got)
	case <-time.After(200 * time.Millisecond): // a bound for a wrong notification, not a timing assertion
	}
	if err := b.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "file:///shared.txt"}); err != nil {
		t.Fatal(err)
	}
	if f.beta.Subscribed("file:///shared.txt") != 1 {
		t.Error("beta was unsubscribed while a still listens")
	}
	_ = a.Close()
	waitFor(t, "the servers' subscriptions to end with the last session", func() bool {
		return f.alpha.Subscribed("file:///shared.txt") == 0 && f.beta.Subscribed("file:///shared.txt") == 0
	})
}
