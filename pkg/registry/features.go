package registry

import (
	"log/slog"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/yosida95/uritemplate/v3"

	"github.com/toolnexus/toolnexus/pkg/feature"
)

// Features is the catalog of what sources offer besides tools: resources,
// resource templates and prompts, one layer per source instance, published
// and read as the tool registry is — writers replace a whole layer and
// publish a new immutable FeatureSnapshot with one atomic store, readers
// never lock.
//
// Prompts are named like tools (the source's prefix), and a later layer
// wins a clash. Resource URIs stay unique without hiding anything: of two
// layers offering the same URI (or the same URI template), the later keeps
// it and the earlier serves it rewritten as RewritePrefix + its escaped
// server name + "/" + the URI, which Route turns back into the server and
// its own URI. Served maps any URI a server returns (a read's contents, an
// embedded resource) into that one namespace, so a server can never hand
// out a URI that reads another server's resource.
type Features struct {
	current atomic.Pointer[FeatureSnapshot]
	mu      sync.Mutex // serialises writers
	layers  map[LayerID]feature.Set
	hooks   []*featureHook
	log     *slog.Logger
}

type featureHook struct {
	fn func(prev, next *FeatureSnapshot)
}

// RewritePrefix starts every rewritten resource URI. A server's own URI
// that starts with it is not served.
const RewritePrefix = "toolnexus://"

// NewFeatures makes an empty catalog at revision 0.
func NewFeatures(log *slog.Logger) *Features {
	if log == nil {
		log = slog.Default()
	}
	f := &Features{layers: map[LayerID]feature.Set{}, log: log}
	f.current.Store(emptyFeatures)
	return f
}

// Snapshot is the current view; it never blocks.
func (f *Features) Snapshot() *FeatureSnapshot { return f.current.Load() }

// Replace swaps one layer's features and publishes the result.
func (f *Features) Replace(id LayerID, set feature.Set) {
	f.mu.Lock()
	defer f.mu.Unlock()
	old, had := f.layers[id]
	f.layers[id] = set
	if set.Empty() && (!had || old.Empty()) {
		return // nothing a reader could see changed
	}
	f.publishLocked()
}

// Remove drops a layer; removing an absent one publishes nothing.
func (f *Features) Remove(id LayerID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	set, ok := f.layers[id]
	if !ok {
		return
	}
	delete(f.layers, id)
	if !set.Empty() {
		f.publishLocked()
	}
}

// Subscribe calls fn, under the writer lock and in revision order, after
// every published change, until cancel. Keep it quick.
func (f *Features) Subscribe(fn func(prev, next *FeatureSnapshot)) (cancel func()) {
	h := &featureHook{fn}
	f.mu.Lock()
	f.hooks = append(f.hooks, h)
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		for i, x := range f.hooks {
			if x == h {
				f.hooks = append(f.hooks[:i:i], f.hooks[i+1:]...)
				return
			}
		}
	}
}

func (f *Features) publishLocked() {
	prev := f.current.Load()
	next := buildFeatures(prev.revision+1, f.layers, f.log)
	f.current.Store(next)
	for _, h := range f.hooks {
		h.fn(prev, next)
	}
}

// ResourceEntry is one served resource.
type ResourceEntry struct {
	// Resource is as served: its URI is unique in the snapshot.
	Resource feature.Resource
	// Upstream is the server's own URI.
	Upstream string
	Layer    LayerID
}

// TemplateEntry is one served resource template.
type TemplateEntry struct {
	Template feature.Template // URITemplate as served
	Upstream string           // the server's own template
	Layer    LayerID
	match    *regexp.Regexp // of the upstream template
}

// PromptEntry is one served prompt.
type PromptEntry struct {
	Prompt feature.Prompt
	Layer  LayerID
}

// Target is where a request for a served URI goes.
type Target struct {
	Layer LayerID
	// URI is the server's own URI.
	URI    string
	Server feature.Server
}

// FeatureSnapshot is an immutable view of the catalog at one revision.
type FeatureSnapshot struct {
	revision  uint64
	resources []*ResourceEntry // by served URI
	byURI     map[string]*ResourceEntry
	// owned are the upstream URIs each layer lists.
	owned     map[LayerID]map[string]bool
	templates []*TemplateEntry // by served template
	byTmpl    map[string]*TemplateEntry
	// route is the templates in precedence order, the highest first.
	route    []*TemplateEntry
	prompts  []*PromptEntry // by name
	byPrompt map[string]*PromptEntry
	shadowed []Shadow
	sets     map[LayerID]feature.Set
	// servers maps a rewritten URI's escaped server name to its layer.
	servers map[string]LayerID
	// completes and subscribes: some layer answers completion/complete
	// for its prompts or templates, or resources/subscribe for its
	// resources.
	completes, subscribes bool
}

var emptyFeatures = &FeatureSnapshot{byURI: map[string]*ResourceEntry{}, owned: map[LayerID]map[string]bool{},
	byTmpl: map[string]*TemplateEntry{}, byPrompt: map[string]*PromptEntry{}, sets: map[LayerID]feature.Set{}, servers: map[string]LayerID{}}

// Revision increases by one with every published change.
func (s *FeatureSnapshot) Revision() uint64 { return s.revision }

// Resources are every served resource, sorted by URI in byte order. Shared:
// do not modify.
func (s *FeatureSnapshot) Resources() []*ResourceEntry { return s.resources }

// Templates are every served template, sorted by URI template.
func (s *FeatureSnapshot) Templates() []*TemplateEntry { return s.templates }

// Prompts are every served prompt, sorted by name.
func (s *FeatureSnapshot) Prompts() []*PromptEntry { return s.prompts }

// Prompt finds a prompt by its served name.
func (s *FeatureSnapshot) Prompt(name string) (*PromptEntry, bool) {
	e, ok := s.byPrompt[name]
	return e, ok
}

// Template finds a template by its served URI template.
func (s *FeatureSnapshot) Template(uriTemplate string) (*TemplateEntry, bool) {
	e, ok := s.byTmpl[uriTemplate]
	return e, ok
}

// Resource finds a listed resource by its served URI.
func (s *FeatureSnapshot) Resource(uri string) (*ResourceEntry, bool) {
	e, ok := s.byURI[uri]
	return e, ok
}

// Set is the features a layer published.
func (s *FeatureSnapshot) Set(id LayerID) (feature.Set, bool) {
	set, ok := s.sets[id]
	return set, ok
}

// Offers reports whether some server answers completion/complete for a
// prompt or template it serves, and resources/subscribe for a resource.
func (s *FeatureSnapshot) Offers() (completions, subscriptions bool) {
	return s.completes, s.subscribes
}

// ShadowedPrompts lists the prompts hidden by a later layer's same name.
func (s *FeatureSnapshot) ShadowedPrompts() []Shadow { return s.shadowed }

// SeekResource, SeekTemplate and SeekPrompt return the index of the first
// entry sorting after `after`, for paging.
func (s *FeatureSnapshot) SeekResource(after string) int {
	return sort.Search(len(s.resources), func(i int) bool { return s.resources[i].Resource.URI > after })
}

// SeekTemplate: see SeekResource.
func (s *FeatureSnapshot) SeekTemplate(after string) int {
	return sort.Search(len(s.templates), func(i int) bool { return s.templates[i].Template.URITemplate > after })
}

// SeekPrompt: see SeekResource.
func (s *FeatureSnapshot) SeekPrompt(after string) int {
	return sort.Search(len(s.prompts), func(i int) bool { return s.prompts[i].Prompt.Name > after })
}

// Route finds the server and its own URI for a served URI: a rewritten URI
// names its server (and must be one that server lists or one of its
// templates matches), a listed URI is its resource's, any other goes to
// the highest layer one of whose templates matches it. ok is false for a
// URI no server offers.
func (s *FeatureSnapshot) Route(uri string) (Target, bool) {
	if rest, ok := strings.CutPrefix(uri, RewritePrefix); ok {
		esc, own, ok := strings.Cut(rest, "/")
		id, known := s.servers[esc]
		if !ok || !known || !s.offers(id, own) {
			return Target{}, false
		}
		return Target{Layer: id, URI: own, Server: s.sets[id].Server}, true
	}
	if e, ok := s.byURI[uri]; ok {
		return Target{Layer: e.Layer, URI: e.Upstream, Server: s.sets[e.Layer].Server}, true
	}
	for _, t := range s.route {
		if t.Template.URITemplate == t.Upstream && t.match.MatchString(uri) {
			return Target{Layer: t.Layer, URI: uri, Server: s.sets[t.Layer].Server}, true
		}
	}
	return Target{}, false
}

// offers reports whether layer id lists uri or has a template matching it.
func (s *FeatureSnapshot) offers(id LayerID, uri string) bool {
	if s.owned[id][uri] {
		return true
	}
	for _, t := range s.route {
		if t.Layer == id && t.match.MatchString(uri) {
			return true
		}
	}
	return false
}

// Served is the URI under which a URI that layer id returned is served: the
// URI itself unless it routes to another server's resource (or to another
// URI of this one), then its rewritten form, which routes back to id.
func (s *FeatureSnapshot) Served(id LayerID, uri string) string {
	if t, ok := s.Route(uri); ok && (t.Layer != id || t.URI != uri) {
		return rewrite(id, uri)
	}
	return uri
}

func rewrite(id LayerID, uri string) string {
	return RewritePrefix + url.PathEscape(id.Name) + "/" + uri
}

// buildFeatures makes the snapshot of a set of layers: the highest layer
// first, so that it keeps each URI and name it offers.
func buildFeatures(revision uint64, layers map[LayerID]feature.Set, log *slog.Logger) *FeatureSnapshot {
	ids := make([]LayerID, 0, len(layers))
	for id := range layers {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[j].less(ids[i]) })
	s := &FeatureSnapshot{revision: revision, byURI: map[string]*ResourceEntry{}, owned: map[LayerID]map[string]bool{},
		byTmpl: map[string]*TemplateEntry{}, byPrompt: map[string]*PromptEntry{}, sets: make(map[LayerID]feature.Set, len(ids)),
		servers: make(map[string]LayerID, len(ids))}
	for _, id := range ids {
		set := layers[id]
		s.sets[id] = set
		if _, taken := s.servers[url.PathEscape(id.Name)]; !taken {
			s.servers[url.PathEscape(id.Name)] = id
		}
		s.addResources(id, set.Resources)
		s.addTemplates(id, set.Templates, log)
		s.addPrompts(id, set.Prompts)
		s.completes = s.completes || set.Completions && (len(set.Prompts) > 0 || len(set.Templates) > 0)
		s.subscribes = s.subscribes || set.Subscriptions && (len(set.Resources) > 0 || len(set.Templates) > 0)
	}
	sort.Slice(s.resources, func(i, j int) bool { return s.resources[i].Resource.URI < s.resources[j].Resource.URI })
	sort.Slice(s.templates, func(i, j int) bool {
		return s.templates[i].Template.URITemplate < s.templates[j].Template.URITemplate
	})
	sort.Slice(s.prompts, func(i, j int) bool { return s.prompts[i].Prompt.Name < s.prompts[j].Prompt.Name })
	sortShadows(s.shadowed)
	return s
}

func (s *FeatureSnapshot) addResources(id LayerID, list []feature.Resource) {
	own := make(map[string]bool, len(list))
	s.owned[id] = own
	for _, r := range list {
		if r.URI == "" || strings.HasPrefix(r.URI, RewritePrefix) || own[r.URI] {
			continue // the source drops these; a hand-made set may not
		}
		own[r.URI] = true
		e := &ResourceEntry{Resource: r, Upstream: r.URI, Layer: id}
		if _, taken := s.byURI[r.URI]; taken {
			e.Resource.URI = rewrite(id, r.URI)
		}
		s.byURI[e.Resource.URI] = e
		s.resources = append(s.resources, e)
	}
}

func (s *FeatureSnapshot) addTemplates(id LayerID, list []feature.Template, log *slog.Logger) {
	for _, t := range list {
		if strings.HasPrefix(t.URITemplate, RewritePrefix) {
			continue
		}
		tmpl, err := uritemplate.New(t.URITemplate)
		if err != nil {
			log.Warn("resource template not served: not an RFC 6570 URI template", "layer", id.String(), "template", t.URITemplate, "error", err)
			continue
		}
		e := &TemplateEntry{Template: t, Upstream: t.URITemplate, Layer: id, match: tmpl.Regexp()}
		if prev, taken := s.byTmpl[t.URITemplate]; taken {
			if prev.Layer == id {
				continue
			}
			e.Template.URITemplate = rewrite(id, t.URITemplate)
		}
		s.byTmpl[e.Template.URITemplate] = e
		s.templates = append(s.templates, e)
		s.route = append(s.route, e)
	}
}

func (s *FeatureSnapshot) addPrompts(id LayerID, list []feature.Prompt) {
	for _, p := range list {
		if prev, taken := s.byPrompt[p.Name]; taken {
			if prev.Layer != id {
				s.shadowed = append(s.shadowed, Shadow{Name: p.Name, Hidden: id, WinnerIn: prev.Layer})
			}
			continue
		}
		e := &PromptEntry{Prompt: p, Layer: id}
		s.byPrompt[p.Name] = e
		s.prompts = append(s.prompts, e)
	}
}
