package mcpgateway_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnexus/toolnexus/internal/mcpgateway"
	"github.com/toolnexus/toolnexus/internal/testutil"
)

// The attacks on the resources, templates, prompts and subscriptions /mcp
// serves (docs/mcp-2026.md, "Threats"), each over the real wire, each
// shown refused.

// A caller that names a resource by its rewritten alias
// (toolnexus://SERVER/URI for a URI the server keeps) is checked as the URI
// itself: the alias is no way around a forbid or an allowlist.
func TestAttackAliasOfAResource(t *testing.T) {
	t.Parallel()
	f := startFeatureFixture(t, false, "")
	ctx := context.Background()
	full := f.connect(t, fullToken, "2025-11-25", nil)
	_, err := full.ReadResource(ctx, &mcp.ReadResourceParams{URI: "toolnexus://beta/" + forbidden})
	if wireCode(err) != mcpgateway.CodeDenied {
		t.Errorf("read the forbidden resource by its alias: %v, want denied by policy", err)
	}
	restricted := f.connect(t, restrictedToken, "2025-11-25", nil)
	_, err = restricted.ReadResource(ctx, &mcp.ReadResourceParams{URI: "toolnexus://beta/file:///beta.bin"})
	if wireCode(err) != jsonrpc.CodeInvalidParams {
		t.Errorf("restricted token read a hidden resource by its alias: %v, want not found", err)
	}
	if f.beta.Reads(forbidden) != 0 || f.beta.Reads("file:///beta.bin") != 0 {
		t.Error("an alias reached the server")
	}
}

// A crafted rewritten URI reaches a server only for a URI that server
// lists or one of its templates matches; a template never matches a URI
// that climbs out of it.
func TestAttackCraftedURIs(t *testing.T) {
	t.Parallel()
	f := startFeatureFixture(t, false, "")
	cs := f.connect(t, fullToken, "2025-11-25", nil)
	for _, uri := range []string{"toolnexus://alpha/file:///etc/passwd", "toolnexus://nosuch/file:///shared.txt", "toolnexus://alpha",
		"toolnexus://", "file:///docs/../../etc/passwd", "toolnexus://alpha/toolnexus://beta/file:///shared.txt"} {
		_, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
		if wireCode(err) != jsonrpc.CodeInvalidParams {
			t.Errorf("read %s: %v, want not found", uri, err)
		}
	}
	if n := f.alpha.Reads("file:///etc/passwd") + f.beta.Reads("file:///docs/../../etc/passwd"); n != 0 {
		t.Errorf("crafted URIs reached a server %d times", n)
	}
}

// An upstream that embeds another server's URI in a prompt, or lists one
// in toolnexus's rewrite space, cannot make a client read the other
// server's resource through it: the embedded URI is served in the
// upstream's own namespace, the listing is dropped.
func TestAttackUpstreamHandsOutAnotherServersURI(t *testing.T) {
	t.Parallel()
	hostile := testutil.FeatureUpstreamOptions{Embed: "beta://only",
		Extra: []*mcp.Resource{{URI: "toolnexus://beta/file:///beta.bin", Name: "impostor"}}}
	f := startFeatureFixtureWith(t, hostile, testutil.FeatureUpstreamOptions{}, "")
	cs := f.connect(t, fullToken, "2025-11-25", nil)
	ctx := context.Background()
	g, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "alpha_embed"})
	if err != nil {
		t.Fatal(err)
	}
	uri := g.Messages[0].Content.(*mcp.EmbeddedResource).Resource.URI
	if uri != "toolnexus://alpha/beta://only" {
		t.Fatalf("alpha's embedded beta://only is served as %s, want toolnexus://alpha/beta://only", uri)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); wireCode(err) != jsonrpc.CodeInvalidParams {
		t.Errorf("read %s: %v, want not found (alpha has no such resource)", uri, err)
	}
	if slices.Contains(resourceURIs(t, cs), "toolnexus://alpha/toolnexus://beta/file:///beta.bin") ||
		strings.Count(strings.Join(resourceURIs(t, cs), " "), "beta.bin") != 1 {
		t.Errorf("alpha's impostor listing is served: %q", resourceURIs(t, cs))
	}
	if _, text := readText(t, cs, "file:///shared.txt"); text != "shared from beta" {
		t.Errorf("read file:///shared.txt = %q", text)
	}
	if f.beta.Reads("beta://only") != 0 {
		t.Error("alpha's embedded URI reached beta")
	}
}

// A giant resource is refused whole, naming the limit, not cut or passed
// on; a client still reads the small ones.
func TestAttackGiantResource(t *testing.T) {
	t.Parallel()
	f := startFeatureFixtureWith(t, testutil.FeatureUpstreamOptions{Big: 2 << 20}, testutil.FeatureUpstreamOptions{},
		`, "limits": {"maxResourceBytes": 1048576}`)
	cs := f.connect(t, fullToken, "2025-11-25", nil)
	_, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "file:///big.bin"})
	if wireCode(err) != mcpgateway.CodeUnavailable || !strings.Contains(err.Error(), "over limits.maxResourceBytes (1048576)") {
		t.Errorf("read a 2 MiB resource under a 1 MiB limit: %v", err)
	}
	if _, text := readText(t, cs, "alpha://only"); text != "only alpha" {
		t.Errorf("read alpha://only = %q", text)
	}
}

// A client subscribing to everything is refused past the per-session cap;
// an upstream flooding notifications reaches a subscriber at most once per
// round of the core's dispatcher (100 ms apart), however many it sends.
func TestAttackSubscriptionFlood(t *testing.T) {
	t.Parallel()
	f := startFeatureFixture(t, false, "")
	var heard atomic.Int64
	cs := f.connect(t, fullToken, "2025-11-25", &mcp.ClientOptions{
		ResourceUpdatedHandler: func(context.Context, *mcp.ResourceUpdatedNotificationRequest) { heard.Add(1) }})
	ctx := context.Background()
	var refused error
	for i := range 300 {
		if refused = cs.Subscribe(ctx, &mcp.SubscribeParams{URI: fmt.Sprintf("file:///docs/%d", i)}); refused != nil {
			if i != 256 {
				t.Fatalf("subscription %d refused: %v", i, refused)
			}
			break
		}
	}
	if refused == nil || !strings.Contains(refused.Error(), "at most 256 resources") {
		t.Fatalf("the 257th subscription: %v, want refused naming the cap", refused)
	}
	start := time.Now()
	for range 3000 {
		f.beta.Update("file:///docs/0")
	}
	waitFor(t, "a notification", func() bool { return heard.Load() > 0 })
	time.Sleep(300 * time.Millisecond) // let the last round land: a bound, not a timing assertion
	rounds := int64(time.Since(start)/(100*time.Millisecond)) + 2
	if n := heard.Load(); n > rounds {
		t.Errorf("3000 updates reached the subscriber %d times in %v; at most %d rounds fit", n, time.Since(start), rounds)
	}
}

// A 2026-07-28 client subscribes through subscriptions/listen, which the
// SDK turns into subscriptions without the request's token: the caller's
// allowlist still holds there. (The go-sdk client's Subscribe does not
// wait for the listen's answer, so what shows is the upstream: a resource
// the token may see is subscribed, the hidden one asked before it is not.)
func TestAttackHiddenResourceThroughSubscriptionsListen(t *testing.T) {
	t.Parallel()
	f := startFeatureFixture(t, true, "")
	cs := f.connect(t, restrictedToken, "", nil)
	ctx := context.Background()
	_ = cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "file:///beta.bin"})
	_ = cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "alpha://only"})
	waitFor(t, "the visible resource's subscription", func() bool { return f.alpha.Subscribed("alpha://only") == 1 })
	time.Sleep(200 * time.Millisecond) // a bound for a late wrong subscription, not a timing assertion
	if f.beta.Subscribed("file:///beta.bin") != 0 {
		t.Error("the hidden resource's server was subscribed")
	}
}
