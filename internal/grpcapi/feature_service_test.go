package grpcapi_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
)

// startFeatureFront serves two MCP servers, alpha and beta, which clash on
// a resource URI, a template and a prompt name, over FeatureService.
func startFeatureFront(t *testing.T) (*front, *testutil.FeatureUpstream, *testutil.FeatureUpstream) {
	t.Helper()
	alpha := testutil.StartFeatureUpstream(t, "alpha", testutil.FeatureUpstreamOptions{})
	beta := testutil.StartFeatureUpstream(t, "beta", testutil.FeatureUpstreamOptions{Modern: true})
	f := startFront(t, string(testutil.FeatureConfig(t, t.TempDir(), alpha, beta, "")))
	deadline := time.Now().Add(20 * time.Second) // a bound for the servers connecting
	for len(f.core.Features().Prompts()) < 4 {
		if time.Now().After(deadline) {
			t.Fatal("the two servers' prompts never appeared")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return f, alpha, beta
}

func listResources(t *testing.T, ctx context.Context, c pb.FeatureServiceClient) []string {
	t.Helper()
	var out []string
	tok := ""
	for {
		res, err := c.ListResources(ctx, &pb.ListResourcesRequest{PageSize: 2, PageToken: tok})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.GetResources() {
			out = append(out, r.GetUri()+"@"+r.GetServer())
		}
		if tok = res.GetNextPageToken(); tok == "" {
			return out
		}
	}
}

// TestFeatureServiceFromTwoServersWithClashingNames is the gRPC side of
// the /mcp test of the same name: the same served URIs and names, paged,
// read back from the server that owns each, embedded URIs in the served
// namespace, completion routed to the owner.
func TestFeatureServiceFromTwoServersWithClashingNames(t *testing.T) {
	t.Parallel()
	f, alpha, _ := startFeatureFront(t)
	ctx := bearer(context.Background(), testutil.FeatureFullToken)
	want := []string{"alpha://only@alpha", "beta://only@beta", "file:///alpha.bin@alpha", "file:///beta.bin@beta",
		"file:///shared.txt@beta", "toolnexus://alpha/file:///shared.txt@alpha"}
	if got := listResources(t, ctx, f.features); !slices.Equal(got, want) {
		t.Errorf("ListResources = %q, want %q", got, want)
	}
	tl, err := f.features.ListResourceTemplates(ctx, &pb.ListResourceTemplatesRequest{})
	if err != nil || len(tl.GetResourceTemplates()) != 2 || tl.GetResourceTemplates()[1].GetUriTemplate() != "toolnexus://alpha/file:///docs/{name}" {
		t.Errorf("ListResourceTemplates = %v, %v", tl, err)
	}
	for uri, text := range map[string]string{"file:///shared.txt": "shared from beta", "toolnexus://alpha/file:///shared.txt": "shared from alpha",
		"toolnexus://alpha/file:///docs/a": "doc a from alpha", "file:///docs/b": "doc b from beta"} {
		res, err := f.features.ReadResource(ctx, &pb.ReadResourceRequest{Uri: uri})
		if err != nil || len(res.GetContents()) != 1 || res.GetContents()[0].GetText() != text || res.GetContents()[0].GetUri() != uri {
			t.Errorf("ReadResource %s = %v, %v; want %q", uri, res, err, text)
		}
	}
	if alpha.Reads("file:///docs/a") != 1 {
		t.Error("alpha's template was not read by its own server")
	}
	res, err := f.features.ReadResource(ctx, &pb.ReadResourceRequest{Uri: "file:///alpha.bin"})
	if err != nil || string(res.GetContents()[0].GetBlob()) != "\x00\x01\x02\xff" {
		t.Errorf("ReadResource blob = %v, %v", res, err)
	}
	pl, err := f.features.ListPrompts(ctx, &pb.ListPromptsRequest{})
	if err != nil || len(pl.GetPrompts()) != 4 || pl.GetPrompts()[1].GetName() != "alpha_greet" || pl.GetPrompts()[1].GetArguments()[0].GetName() != "who" {
		t.Errorf("ListPrompts = %v, %v", pl, err)
	}
	gp, err := f.features.GetPrompt(ctx, &pb.GetPromptRequest{Name: "beta_greet", Arguments: map[string]string{"who": "bo"}})
	if err != nil || gp.GetMessages()[0].GetContent().GetText().GetText() != "beta greets bo" {
		t.Errorf("GetPrompt = %v, %v", gp, err)
	}
	gp, err = f.features.GetPrompt(ctx, &pb.GetPromptRequest{Name: "alpha_embed"})
	if err != nil || gp.GetMessages()[0].GetContent().GetResource().GetUri() != "toolnexus://alpha/file:///shared.txt" {
		t.Errorf("GetPrompt alpha_embed = %v, %v; want the embedded URI served", gp, err)
	}
	for _, tc := range []struct {
		req  *pb.CompleteRequest
		want []string
	}{
		{&pb.CompleteRequest{Ref: &pb.CompleteRequest_Prompt{Prompt: "alpha_greet"}, Argument: "who", Value: "b"}, []string{"alpha-bob"}},
		{&pb.CompleteRequest{Ref: &pb.CompleteRequest_UriTemplate{UriTemplate: "file:///docs/{name}"}, Argument: "name", Value: "b"}, []string{"beta-bob"}},
	} {
		res, err := f.features.Complete(ctx, tc.req)
		if err != nil || !slices.Equal(res.GetValues(), tc.want) {
			t.Errorf("Complete %v = %v, %v; want %q", tc.req, res, err, tc.want)
		}
	}
}

// TestFeatureServiceHidesFromARestrictedToken: what the restricted token
// may not see is in no list and NOT_FOUND everywhere, word for word as a
// name that does not exist; a Cedar forbid is PERMISSION_DENIED naming the
// policy.
func TestFeatureServiceHidesFromARestrictedToken(t *testing.T) {
	t.Parallel()
	f, _, beta := startFeatureFront(t)
	ctx := bearer(context.Background(), testutil.FeatureRestrictedToken)
	want := []string{"alpha://only@alpha", "beta://only@beta", "file:///alpha.bin@alpha", "toolnexus://alpha/file:///shared.txt@alpha"}
	if got := listResources(t, ctx, f.features); !slices.Equal(got, want) {
		t.Errorf("ListResources = %q, want %q", got, want)
	}
	pl, err := f.features.ListPrompts(ctx, &pb.ListPromptsRequest{})
	if err != nil || len(pl.GetPrompts()) != 2 || !strings.HasPrefix(pl.GetPrompts()[0].GetName(), "beta_") {
		t.Errorf("ListPrompts = %v, %v", pl, err)
	}
	same := func(what string, hidden, unknown error, hiddenName, unknownName string) {
		t.Helper()
		if status.Code(hidden) != codes.NotFound || status.Code(unknown) != codes.NotFound ||
			strings.ReplaceAll(status.Convert(hidden).Message(), hiddenName, "X") != strings.ReplaceAll(status.Convert(unknown).Message(), unknownName, "X") {
			t.Errorf("%s: hidden %v, unknown %v (must read the same)", what, hidden, unknown)
		}
	}
	_, hidden := f.features.ReadResource(ctx, &pb.ReadResourceRequest{Uri: "file:///shared.txt"})
	_, unknown := f.features.ReadResource(ctx, &pb.ReadResourceRequest{Uri: "file:///nothing.txt"})
	same("ReadResource", hidden, unknown, "file:///shared.txt", "file:///nothing.txt")
	_, hidden = f.features.GetPrompt(ctx, &pb.GetPromptRequest{Name: "alpha_greet"})
	_, unknown = f.features.GetPrompt(ctx, &pb.GetPromptRequest{Name: "alpha_nothing"})
	same("GetPrompt", hidden, unknown, "alpha_greet", "alpha_nothing")
	_, hidden = f.features.Complete(ctx, &pb.CompleteRequest{Ref: &pb.CompleteRequest_Prompt{Prompt: "alpha_greet"}, Argument: "who"})
	_, unknown = f.features.Complete(ctx, &pb.CompleteRequest{Ref: &pb.CompleteRequest_Prompt{Prompt: "alpha_nothing"}, Argument: "who"})
	same("Complete", hidden, unknown, "alpha_greet", "alpha_nothing")
	w, err := f.features.WatchResource(ctx, &pb.WatchResourceRequest{Uri: "file:///shared.txt"})
	if err == nil {
		_, err = w.Recv()
	}
	if status.Code(err) != codes.NotFound {
		t.Errorf("WatchResource on a hidden resource: %v, want NOT_FOUND", err)
	}
	_, err = f.features.ReadResource(ctx, &pb.ReadResourceRequest{Uri: testutil.FeatureForbidden})
	if status.Code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), "denied by policy no-beta-only") {
		t.Errorf("ReadResource %s: %v, want PERMISSION_DENIED by no-beta-only", testutil.FeatureForbidden, err)
	}
	if beta.Reads(testutil.FeatureForbidden) != 0 {
		t.Error("the forbidden resource reached its server")
	}
}

// TestFeatureServiceWatchResource: a watch hears its resource's changes
// (under the served URI) and nothing of another server's same URI; the
// server is unsubscribed when the watch ends.
func TestFeatureServiceWatchResource(t *testing.T) {
	t.Parallel()
	f, alpha, beta := startFeatureFront(t)
	ctx, cancel := context.WithCancel(bearer(context.Background(), testutil.FeatureFullToken))
	defer cancel()
	w, err := f.features.WatchResource(ctx, &pb.WatchResourceRequest{Uri: "toolnexus://alpha/file:///shared.txt"})
	if err != nil {
		t.Fatal(err)
	}
	first, err := w.Recv()
	if err != nil || !first.GetSubscribed() {
		t.Fatalf("first message %v, %v; want subscribed", first, err)
	}
	if alpha.Subscribed("file:///shared.txt") != 1 {
		t.Fatal("alpha was not subscribed")
	}
	beta.Update("file:///shared.txt") // another server's same URI: not this watch's
	alpha.Update("file:///shared.txt")
	got, err := w.Recv()
	if err != nil || got.GetUri() != "toolnexus://alpha/file:///shared.txt" || got.GetSubscribed() {
		t.Fatalf("change = %v, %v", got, err)
	}
	cancel()
	deadline := time.Now().Add(10 * time.Second) // a bound, not a timing assertion
	for alpha.Subscribed("file:///shared.txt") != 0 {
		if time.Now().After(deadline) {
			t.Fatal("alpha is still subscribed after the watch ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
