package registry_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/feature"
	"github.com/toolnexus/toolnexus/pkg/registry"
)

func mcpLayer(name string) registry.LayerID { return registry.LayerID{Kind: kindMCP, Name: name} }

func featureSet(uris ...string) feature.Set {
	set := feature.Set{Templates: []feature.Template{{URITemplate: "file:///docs/{name}"}}, Prompts: []feature.Prompt{{Name: "p"}}}
	for _, u := range uris {
		set.Resources = append(set.Resources, feature.Resource{URI: u})
	}
	return set
}

func ExampleFeatures() {
	f := registry.NewFeatures(nil)
	// Two MCP servers both offer file:///shared.txt and the same template.
	f.Replace(registry.LayerID{Kind: kindMCP, Name: "alpha"}, featureSet("file:///shared.txt", "alpha://only"))
	f.Replace(registry.LayerID{Kind: kindMCP, Name: "beta"}, featureSet("file:///shared.txt"))
	s := f.Snapshot()
	for _, e := range s.Resources() {
		fmt.Println(e.Resource.URI, "is", e.Upstream, "of", e.Layer.Name)
	}
	for _, e := range s.Templates() {
		fmt.Println(e.Template.URITemplate, "of", e.Layer.Name)
	}
	t, _ := s.Route("toolnexus://alpha/file:///docs/intro")
	fmt.Println("toolnexus://alpha/file:///docs/intro reads", t.URI, "from", t.Layer.Name)
	// A URI alpha returns that is beta's is served in alpha's namespace.
	fmt.Println(s.Served(registry.LayerID{Kind: kindMCP, Name: "alpha"}, "file:///shared.txt"))
	// Output:
	// alpha://only is alpha://only of alpha
	// file:///shared.txt is file:///shared.txt of beta
	// toolnexus://alpha/file:///shared.txt is file:///shared.txt of alpha
	// file:///docs/{name} of beta
	// toolnexus://alpha/file:///docs/{name} of alpha
	// toolnexus://alpha/file:///docs/intro reads file:///docs/intro from alpha
	// toolnexus://alpha/file:///shared.txt
}

// Route and Served keep one namespace: a served URI routes back to the
// server and URI it was made from, a URI a server returns is left alone
// unless it would reach another server, and a rewritten URI reaches its
// server only for what that server offers.
func TestFeaturesRouteAndServed(t *testing.T) {
	f := registry.NewFeatures(nil)
	a, b := mcpLayer("alpha"), mcpLayer("beta/x") // a name that needs escaping
	f.Replace(a, featureSet("file:///shared.txt", "toolnexus://beta/evil"))
	f.Replace(b, featureSet("file:///shared.txt", "beta://only"))
	s := f.Snapshot()
	for _, e := range s.Resources() {
		if e.Upstream == "toolnexus://beta/evil" {
			t.Error("a URI in the rewrite space was served")
		}
		got, ok := s.Route(e.Resource.URI)
		if !ok || got.Layer != e.Layer || got.URI != e.Upstream {
			t.Errorf("Route(%s) = %+v, %v; want %s of %s", e.Resource.URI, got, ok, e.Upstream, e.Layer)
		}
		if served := s.Served(e.Layer, e.Upstream); served != e.Resource.URI {
			t.Errorf("Served(%s, %s) = %s, want %s", e.Layer, e.Upstream, served, e.Resource.URI)
		}
	}
	for uri, want := range map[string]string{
		"file:///docs/a":                   "toolnexus://alpha/file:///docs/a", // beta/x's template wins the clash
		"beta://only":                      "toolnexus://alpha/beta://only",    // another server's resource
		"nobody://x":                       "nobody://x",                       // no server's: harmless as it is
		"toolnexus://beta%2Fx/beta://only": "toolnexus://alpha/toolnexus://beta%2Fx/beta://only",
		"toolnexus://alpha/file:///docs/b": "toolnexus://alpha/toolnexus://alpha/file:///docs/b", // not a URI of alpha's own
	} {
		if got := s.Served(a, uri); got != want {
			t.Errorf("Served(alpha, %s) = %s, want %s", uri, got, want)
		}
	}
	for _, uri := range []string{"toolnexus://alpha/beta://only", "toolnexus://nobody/file:///shared.txt", "toolnexus://alpha", "nobody://x"} {
		if got, ok := s.Route(uri); ok {
			t.Errorf("Route(%s) = %+v, want no route", uri, got)
		}
	}
	if got := s.Prompts(); len(got) != 1 || got[0].Layer != b || !slices.Equal([]string{s.ShadowedPrompts()[0].Hidden.Name}, []string{"alpha"}) {
		t.Errorf("prompts %v shadowed %v: the later layer wins p", got, s.ShadowedPrompts())
	}
	f.Remove(b)
	if s2 := f.Snapshot(); s2.Revision() != s.Revision()+1 || len(s2.Resources()) != 1 || s2.Resources()[0].Resource.URI != "file:///shared.txt" {
		t.Errorf("after removing beta/x: %d resources at revision %d", len(s2.Resources()), s2.Revision())
	}
}
