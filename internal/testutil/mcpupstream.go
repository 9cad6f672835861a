package testutil

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FeatureUpstream is a real MCP server (the go-sdk's, over streamable HTTP
// on loopback) offering resources, a resource template, prompts,
// completion and subscriptions, for the tests of toolnexus serving them.
// Two of them with different names clash on purpose: both list
// file:///shared.txt, the template file:///docs/{name} and the prompt
// "greet"; each also has NAME://only, a blob and a prompt embedding
// file:///shared.txt. Every text names the server, so a test sees which
// one answered.
type FeatureUpstream struct {
	URL    string
	Server *mcp.Server

	mu         sync.Mutex
	subscribed map[string]int // URI → subscribe calls minus unsubscribe calls
	reads      map[string]int
}

// FeatureUpstreamOptions shape a FeatureUpstream.
type FeatureUpstreamOptions struct {
	// Modern serves MCP 2026-07-28 (a stateless handler); otherwise the
	// server keeps sessions (2025-11-25 and older).
	Modern bool
	// Big adds the resource file:///big.bin of this many bytes.
	Big int
	// Extra are more resources, listed as they are (a hostile upstream's
	// URIs).
	Extra []*mcp.Resource
	// Embed is the URI the prompt "embed" embeds (default file:///shared.txt).
	Embed string
	// Texts are more text/plain resources, URI → text.
	Texts map[string]string
}

// StartFeatureUpstream serves one upstream until the test ends.
func StartFeatureUpstream(t testing.TB, name string, o FeatureUpstreamOptions) *FeatureUpstream {
	t.Helper()
	u := &FeatureUpstream{subscribed: map[string]int{}, reads: map[string]int{}}
	s := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, &mcp.ServerOptions{
		CompletionHandler: func(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			var vals []string
			for _, v := range []string{"alice", "albert", "bob"} {
				if strings.HasPrefix(v, req.Params.Argument.Value) {
					vals = append(vals, name+"-"+v)
				}
			}
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: vals, Total: len(vals)}}, nil
		},
		SubscribeHandler:   func(_ context.Context, req *mcp.SubscribeRequest) error { u.count(req.Params.URI, 1); return nil },
		UnsubscribeHandler: func(_ context.Context, req *mcp.UnsubscribeRequest) error { u.count(req.Params.URI, -1); return nil },
	})
	u.Server = s
	text := func(uri, body string) mcp.ResourceHandler {
		return func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			u.read(req.Params.URI)
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: body}}}, nil
		}
	}
	s.AddResource(&mcp.Resource{URI: "file:///shared.txt", Name: "shared", MIMEType: "text/plain"}, text("file:///shared.txt", "shared from "+name))
	s.AddResource(&mcp.Resource{URI: name + "://only", Name: "only"}, text(name+"://only", "only "+name))
	s.AddResource(&mcp.Resource{URI: "file:///" + name + ".bin", Name: "blob", MIMEType: "application/octet-stream"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/octet-stream", Blob: []byte{0, 1, 2, 255}}}}, nil
		})
	if o.Big > 0 {
		big := make([]byte, o.Big)
		for i := range big {
			big[i] = byte(i)
		}
		s.AddResource(&mcp.Resource{URI: "file:///big.bin", Name: "big", MIMEType: "application/octet-stream", Size: int64(o.Big)},
			func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/octet-stream", Blob: big}}}, nil
			})
	}
	for _, r := range o.Extra {
		s.AddResource(r, text(r.URI, "extra from "+name))
	}
	for uri, body := range o.Texts {
		s.AddResource(&mcp.Resource{URI: uri, Name: "text", MIMEType: "text/plain"}, text(uri, body))
	}
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "file:///docs/{name}", Name: "docs"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			u.read(req.Params.URI)
			doc := strings.TrimPrefix(req.Params.URI, "file:///docs/")
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "doc " + doc + " from " + name}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "greet", Description: "Greet someone", Arguments: []*mcp.PromptArgument{{Name: "who", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user",
				Content: &mcp.TextContent{Text: fmt.Sprintf("%s greets %s", name, req.Params.Arguments["who"])}}}}, nil
		})
	embed := o.Embed
	if embed == "" {
		embed = "file:///shared.txt"
	}
	s.AddPrompt(&mcp.Prompt{Name: "embed", Description: "A prompt with an embedded resource"},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user",
				Content: &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: embed, MIMEType: "text/plain", Text: "embedded by " + name}}}}}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: o.Modern})
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	u.URL = hs.URL
	return u
}

func (u *FeatureUpstream) count(uri string, d int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.subscribed[uri] += d
}

func (u *FeatureUpstream) read(uri string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.reads[uri]++
}

// Subscribed is how many subscriptions to uri the server holds.
func (u *FeatureUpstream) Subscribed(uri string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.subscribed[uri]
}

// Reads is how often uri was read.
func (u *FeatureUpstream) Reads(uri string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.reads[uri]
}

// Update sends notifications/resources/updated for uri to its subscribers.
func (u *FeatureUpstream) Update(uri string) {
	_ = u.Server.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: uri})
}

// Tokens and names of FeatureConfig.
const (
	FeatureFullToken       = "full-token-0123456789"
	FeatureRestrictedToken = "restricted-token-0123456789"
	// FeatureForbidden is the resource FeatureConfig's policy forbids reading.
	FeatureForbidden = "beta://only"
)

// FeatureConfig is the config of a toolnexus serving two FeatureUpstreams,
// alpha and beta, with two tokens — full, and restricted (beta's prompts,
// beta:// resources and alpha's resources only) — and a Cedar policy, in
// dir, forbidding to read FeatureForbidden. extra is added to the top
// object (e.g. `, "limits": {...}`).
func FeatureConfig(t testing.TB, dir string, alpha, beta *FeatureUpstream, extra string) []byte {
	t.Helper()
	pol := filepath.Join(dir, "policy.cedar")
	if err := os.WriteFile(pol, []byte(fmt.Sprintf(`permit(principal, action, resource);
@id("no-beta-only") @reason("beta's own resource is off limits")
forbid(principal, action == Action::"read", resource == Resource::%q);
`, FeatureForbidden)), 0o600); err != nil {
		t.Fatal(err)
	}
	return []byte(fmt.Sprintf(`{"builtins": false, "mcpServers": {"alpha": {"url": %q}, "beta": {"url": %q}},
	  "auth": {"tokens": [
	    {"name": "full", "token": %q},
	    {"name": "restricted", "token": %q, "tools": ["beta_*"], "resources": ["beta://*", "server:alpha"], "prompts": ["beta_*"]}]},
	  "policy": {"files": [%q]}%s}`, alpha.URL, beta.URL, FeatureFullToken, FeatureRestrictedToken, pol, extra))
}

// CPUPerOp reports the process's CPU time (user and system, every
// goroutine: client, toolnexus and upstream alike when all run in the
// test) per iteration as "cpu-ms/op": unlike wall time, it does not move
// with what else the machine runs. Call it after the loop with the CPU time
// CPUTime returned before it.
func CPUPerOp(b *testing.B, before time.Duration) {
	b.ReportMetric(float64(CPUTime()-before)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// CPUTime is the process's CPU time so far.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchReadResource reads uri, size bytes, from the MCP endpoint url with
// the go-sdk client in a benchmark loop, reporting CPU per read
// (CPUPerOp): the direct read and a read through toolnexus's /mcp measured
// alike.
func BenchReadResource(b *testing.B, url, uri string, size int) {
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	b.SetBytes(int64(size))
	cpu := CPUTime()
	for b.Loop() {
		res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
		if err != nil || len(res.Contents) != 1 || len(res.Contents[0].Blob) != size {
			b.Fatalf("read: %v", err)
		}
	}
	CPUPerOp(b, cpu)
}
