package engine

import (
	"context"

	"github.com/toolnexus/toolnexus/pkg/feature"
	"github.com/toolnexus/toolnexus/pkg/registry"
)

// An instance's features (an MCP server's resources, templates and
// prompts) go through its publisher like its tools: nothing is published
// once the instance is retired or while a retry's instance is staged, and
// the requests running on them count towards the instance's drain, so a
// read in flight finishes on the server it started on.

// featureSink is where the features of every instance go.
type featureSink struct {
	catalog *registry.Features
	updated func(id registry.LayerID, uri string)
}

// newPublisher is the publisher of one new instance.
func (e *Engine) newPublisher() *instancePublisher {
	p := newInstancePublisher(e.pub)
	if e.opts.Features != nil {
		p.feat = &featureSink{catalog: e.opts.Features, updated: e.opts.ResourceUpdated}
	}
	return p
}

// dropFeatures removes a layer's features with its tools.
func (e *Engine) dropFeatures(id registry.LayerID) {
	if e.opts.Features != nil {
		e.opts.Features.Remove(id)
	}
}

// stagedFeatures is the last feature publish of a staging instance.
type stagedFeatures struct {
	id  registry.LayerID
	set feature.Set
}

// ReplaceFeatures implements sources.FeaturePublisher.
func (p *instancePublisher) ReplaceFeatures(id registry.LayerID, set feature.Set) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.feat == nil || p.retired:
	case p.staging:
		p.stagedFeat = &stagedFeatures{id: id, set: set}
	default:
		p.replaceFeaturesLocked(id, set)
	}
	return nil
}

func (p *instancePublisher) replaceFeaturesLocked(id registry.LayerID, set feature.Set) {
	if set.Server != nil {
		set.Server = countedServer{Server: set.Server, p: p}
	}
	p.feat.catalog.Replace(id, set)
}

// commitFeatures publishes what a staging instance held back; commit's
// caller holds p.mu.
func (p *instancePublisher) commitFeaturesLocked() {
	st := p.stagedFeat
	p.stagedFeat = nil
	if st != nil && !p.retired && p.feat != nil {
		p.replaceFeaturesLocked(st.id, st.set)
	}
}

// ResourceUpdated implements sources.FeaturePublisher: a retired
// instance's notifications are dropped.
func (p *instancePublisher) ResourceUpdated(id registry.LayerID, uri string) {
	p.mu.Lock()
	live := p.feat != nil && p.feat.updated != nil && !p.retired && !p.staging
	p.mu.Unlock()
	if live {
		p.feat.updated(id, uri)
	}
}

// countedServer counts the feature requests running on an instance.
type countedServer struct {
	feature.Server
	p *instancePublisher
}

func (c countedServer) Read(ctx context.Context, uri string) ([]feature.Contents, error) {
	c.p.running.Add(1)
	defer c.p.leave()
	return c.Server.Read(ctx, uri)
}

func (c countedServer) GetPrompt(ctx context.Context, name string, args map[string]string) (feature.PromptResult, error) {
	c.p.running.Add(1)
	defer c.p.leave()
	return c.Server.GetPrompt(ctx, name, args)
}

func (c countedServer) Complete(ctx context.Context, req feature.CompleteRequest) (feature.Completion, error) {
	c.p.running.Add(1)
	defer c.p.leave()
	return c.Server.Complete(ctx, req)
}
