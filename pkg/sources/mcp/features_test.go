package mcp_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/feature"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources/mcp"
)

// featurePub is a registry that also takes features, as the engine's
// publisher does.
type featurePub struct {
	*registry.Registry
	features *registry.Features
	mu       sync.Mutex
	updated  []string
}

func (p *featurePub) ReplaceFeatures(id registry.LayerID, set feature.Set) error {
	p.features.Replace(id, set)
	return nil
}

func (p *featurePub) ResourceUpdated(_ registry.LayerID, uri string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.updated = append(p.updated, uri)
}

func (p *featurePub) heard() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.updated)
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second) // a bound, not a timing assertion
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// An MCP source publishes its server's resources, templates and prompts
// (prompt names prefixed like tools) on either protocol, answers reads,
// prompts and completions as the feature.Server, passes a subscription's
// notifications on, and re-lists when the server's prompts change.
func TestSourcePublishesAndServesFeatures(t *testing.T) {
	for _, modern := range []bool{false, true} {
		t.Run(map[bool]string{false: "2025-11-25", true: "2026-07-28"}[modern], func(t *testing.T) {
			up := testutil.StartFeatureUpstream(t, "up", testutil.FeatureUpstreamOptions{Modern: modern})
			pub := &featurePub{Registry: registry.New(), features: registry.NewFeatures(nil)}
			src := mcp.New("up", remoteConfig(up.URL), testEnv)
			t.Cleanup(func() { _ = src.Close(context.Background()) })
			if err := src.Start(context.Background(), pub); err != nil {
				t.Fatal(err)
			}
			snap := pub.features.Snapshot()
			var names []string
			for _, p := range snap.Prompts() {
				names = append(names, p.Prompt.Name+"="+p.Prompt.Upstream)
			}
			if !slices.Equal(names, []string{"up_embed=embed", "up_greet=greet"}) || len(snap.Resources()) != 3 || len(snap.Templates()) != 1 {
				t.Fatalf("published prompts %q, %d resources, %d templates", names, len(snap.Resources()), len(snap.Templates()))
			}
			set, _ := snap.Set(registry.LayerID{Kind: snap.Resources()[0].Layer.Kind, Name: "up"})
			ctx := context.Background()
			got, err := set.Server.Read(ctx, "file:///docs/x")
			if err != nil || len(got) != 1 || got[0].Wire == nil {
				t.Fatalf("Read = %+v, %v; want the part as the server sent it (Wire)", got, err)
			}
			if d, err := got[0].Decoded(); err != nil || d.Text != "doc x from up" || d.Size() != got[0].Size() {
				t.Errorf("Read, decoded = %+v, %v", d, err)
			}
			_, err = set.Server.Read(ctx, "file:///none")
			if fe := (*feature.Error)(nil); !errors.As(err, &fe) || fe.Kind != feature.NotFound {
				t.Errorf("Read of an unknown URI: %v, want NotFound", err)
			}
			pr, err := set.Server.GetPrompt(ctx, "greet", map[string]string{"who": "al"})
			if err != nil || pr.Messages[0].Content.Text != "up greets al" {
				t.Errorf("GetPrompt = %+v, %v", pr, err)
			}
			c, err := set.Server.Complete(ctx, feature.CompleteRequest{Ref: feature.Ref{Prompt: "greet"}, Argument: "who", Value: "b"})
			if err != nil || !slices.Equal(c.Values, []string{"up-bob"}) {
				t.Errorf("Complete = %+v, %v", c, err)
			}
			if err := set.Server.Subscribe(ctx, "file:///shared.txt"); err != nil {
				t.Fatal(err)
			}
			eventually(t, "the upstream's subscription", func() bool { return up.Subscribed("file:///shared.txt") == 1 })
			up.Update("file:///shared.txt")
			eventually(t, "the update", func() bool { return slices.Contains(pub.heard(), "file:///shared.txt") })
			if err := set.Server.Unsubscribe(ctx, "file:///shared.txt"); err != nil {
				t.Fatal(err)
			}
			up.Server.AddPrompt(&sdk.Prompt{Name: "late"}, func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
				return &sdk.GetPromptResult{}, nil
			})
			eventually(t, "the new prompt", func() bool { _, ok := pub.features.Snapshot().Prompt("up_late"); return ok })
		})
	}
}
