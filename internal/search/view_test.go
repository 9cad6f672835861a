package search

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// hiddenCatalog is 100 tools a restricted view shows (vis_*) and, when
// hidden > 0, that many more it does not, whose words overlap the visible
// ones' and which alone carry "secretword".
func hiddenCatalog(t testing.TB, hidden int) *registry.Snapshot {
	t.Helper()
	var tools []tool.Tool
	verbs := []string{"send", "read", "list", "delete", "create"}
	things := []string{"email", "message", "issue", "file", "invoice"}
	for i := range 100 {
		v, th := verbs[i%5], things[(i/5)%5]
		tools = append(tools, mkTool(t, fmt.Sprintf("vis_%s_%s_%d", v, th, i), fmt.Sprintf("%s a %s of the account", v, th),
			`{"type":"object","properties":{"id":{"type":"string","description":"the `+th+`"}}}`))
	}
	for i := range hidden {
		tools = append(tools, mkTool(t, fmt.Sprintf("hid_%d", i), "send an email message about a secretword issue file invoice",
			`{"type":"object","properties":{"secretword":{"type":"string"}}}`))
	}
	return snapshotOf(t, tools...)
}

var visOnly = View{Key: "vis", Visible: func(e *registry.Entry) bool { return strings.HasPrefix(e.Tool.Name, "vis_") }}

// TestViewScoresAndWorkIgnoreHiddenTools: a restricted view's results —
// every score, and the postings its query walks — are identical whether or
// not 5,000 hidden tools share its words; a word only hidden tools carry
// costs exactly what a word nobody has costs (nothing).
func TestViewScoresAndWorkIgnoreHiddenTools(t *testing.T) {
	var alone, among Cache
	a := alone.For(hiddenCatalog(t, 0), visOnly)
	b := among.For(hiddenCatalog(t, 5000), visOnly)
	if a.Len() != 100 || b.Len() != 100 {
		t.Fatalf("indexes rank %d and %d tools, want the 100 visible ones", a.Len(), b.Len())
	}
	for _, q := range []string{"send an email", "delete the invoice file", "list messages of the account", "id", "secretword", "xylophone"} {
		ra, rb := a.Search(q, 10, nil), b.Search(q, 10, nil)
		if ra.Postings != rb.Postings || len(ra.Hits) != len(rb.Hits) {
			t.Fatalf("%q: %d postings and %d hits alone, %d and %d among hidden tools", q, ra.Postings, len(ra.Hits), rb.Postings, len(rb.Hits))
		}
		for i := range ra.Hits {
			if ra.Hits[i].Entry.Tool.Name != rb.Hits[i].Entry.Tool.Name || ra.Hits[i].Score != rb.Hits[i].Score {
				t.Errorf("%q #%d: %v alone, %v among hidden tools", q, i, ra.Hits[i], rb.Hits[i])
			}
		}
	}
	secret, nobody := b.Search("secretword", 10, nil), b.Search("xylophone", 10, nil)
	if secret.Postings != nobody.Postings || len(secret.Hits) != 0 {
		t.Fatalf("a word only hidden tools carry walks %d postings (hits %v); a word nobody has, %d",
			secret.Postings, names(secret.Hits), nobody.Postings)
	}
	// Each of the 5,000 tools holds the word once in the fielded postings
	// and once in the plain view's.
	if all := among.For(hiddenCatalog(t, 5000), All).Search("secretword", 10, nil); all.Postings != 2*5000 {
		t.Fatalf("the unrestricted view walks %d postings for secretword, want 10000", all.Postings)
	}
}

// TestCacheKeepsViewsApart: two views of one snapshot get their own
// indexes, each view's index is reused, and past maxViews the view searched
// least recently is the one dropped.
func TestCacheKeepsViewsApart(t *testing.T) {
	snap := hiddenCatalog(t, 10)
	var c Cache
	vis, all := c.For(snap, visOnly), c.For(snap, All)
	if vis == all || vis.Len() != 100 || all.Len() != 110 || c.For(snap, visOnly) != vis {
		t.Fatalf("views share or rebuild indexes: %d and %d tools", vis.Len(), all.Len())
	}
	for i := range maxViews {
		c.For(snap, View{Key: fmt.Sprint("v", i), Visible: visOnly.Visible})
		c.For(snap, All) // keeps All the most recently searched
	}
	if c.For(snap, All) != all {
		t.Fatal("the view searched most recently lost its index")
	}
	if c.For(snap, visOnly) == vis {
		t.Fatal("the view searched least recently kept its index past maxViews")
	}
	var n int
	c.views.Range(func(any, any) bool { n++; return true })
	if n != maxViews || c.n != maxViews {
		t.Fatalf("%d views cached (counted %d), want %d", n, c.n, maxViews)
	}
}

// TestIntersectKeys: an allowlist that allows everything adds nothing, so
// an unrestricted caller shares the All index; restricted lists compose.
func TestIntersectKeys(t *testing.T) {
	everything := allow{key: "*", ok: func(string) bool { return true }}
	emails := allow{key: "emails", ok: func(n string) bool { return strings.Contains(n, "email") }}
	sends := allow{key: "sends", ok: func(n string) bool { return strings.Contains(n, "send") }}
	if v := Intersect(everything, everything); v.Key != All.Key || v.Visible != nil {
		t.Fatalf("everything ∩ everything = %q", v.Key)
	}
	v := Intersect(everything, emails, sends)
	if v.Key == Intersect(emails).Key || v.Key == Intersect(sends).Key {
		t.Fatalf("keys collide: %q", v.Key)
	}
	got := names(Build(hiddenCatalog(t, 0), v, nil).Search("email", 100, nil).Hits)
	if len(got) != 4 || slices.ContainsFunc(got, func(n string) bool { return !strings.Contains(n, "send_email") }) {
		t.Fatalf("emails ∩ sends shows %v", got)
	}
}

type allow struct {
	key string
	ok  func(name string) bool
}

func (a allow) Allows(name, _ string) bool { return a.ok(name) }
func (a allow) ViewKey() string            { return a.key }
