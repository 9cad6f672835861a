package registry_test

import (
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

func TestWatchChangesInOrder(t *testing.T) {
	t.Parallel()
	r := registry.New()
	id := registry.Layer(kindNative)
	mustReplace(t, r, id, answers("v0", "keep"))
	w, first := r.Watch()
	defer w.Close()
	if first != r.Snapshot() || first.Revision() != 1 {
		t.Fatalf("Watch returned revision %d, want the current snapshot", first.Revision())
	}

	const n = 10
	for i := range n {
		mustReplace(t, r, id, answers("v", "keep", string(rune('a'+i))))
	}
	prev := first
	for i := range n {
		c := <-w.C()
		if c.Resync || c.Prev != prev || c.Next.Revision() != prev.Revision()+1 {
			t.Fatalf("change %d: resync %v, prev %d, next %d; want consecutive from %d",
				i, c.Resync, c.Prev.Revision(), c.Next.Revision(), prev.Revision())
		}
		prev = c.Next
	}
	if prev != r.Snapshot() {
		t.Error("the last change is not the current snapshot")
	}
	select {
	case c := <-w.C():
		t.Errorf("extra change %+v", c)
	default:
	}
}

func TestWatchStartsNow(t *testing.T) {
	t.Parallel()
	r := registry.New()
	mustReplace(t, r, registry.Layer(kindNative), answers("", "a"))
	w, _ := r.Watch()
	defer w.Close()
	select {
	case c := <-w.C():
		t.Errorf("a change published before Watch was delivered: revision %d", c.Next.Revision())
	default:
	}
}

func TestDiff(t *testing.T) {
	t.Parallel()
	r := registry.New()
	low := registry.Layer(kindBuiltin)
	high := registry.LayerID{Kind: kindMCP, Name: "fs"}
	mustReplace(t, r, low, answers("b", "bash", "read", "write"))
	s1 := r.Snapshot()

	added, removed, changed := registry.Diff(nil, s1)
	if !slices.Equal(added, []string{"bash", "read", "write"}) || removed != nil || changed != nil {
		t.Errorf("Diff(nil, s1) = %v %v %v, want all added", added, removed, changed)
	}

	// Same content rebuilt from new values: nothing changed.
	mustReplace(t, r, low, answers("b", "bash", "read", "write"))
	s2 := r.Snapshot()
	if a, rm, c := registry.Diff(s1, s2); a != nil || rm != nil || c != nil {
		t.Errorf("identical replace: %v %v %v, want no difference", a, rm, c)
	}

	// A new description, a dropped tool and a new tool.
	tools := answers("b", "bash", "read", "glob")
	tools[0].Description = "runs commands"
	mustReplace(t, r, low, tools)
	s3 := r.Snapshot()
	added, removed, changed = registry.Diff(s2, s3)
	if !slices.Equal(added, []string{"glob"}) || !slices.Equal(removed, []string{"write"}) || !slices.Equal(changed, []string{"bash"}) {
		t.Errorf("Diff = added %v removed %v changed %v", added, removed, changed)
	}

	// A later layer taking over a name with an identical tool: the provider changed.
	mustReplace(t, r, high, answers("b", "read"))
	s4 := r.Snapshot()
	added, removed, changed = registry.Diff(s3, s4)
	if added != nil || removed != nil || !slices.Equal(changed, []string{"read"}) {
		t.Errorf("shadowing Diff = %v %v %v, want read changed", added, removed, changed)
	}

	// Schema and source changes count too.
	schema := answers("b", "bash", "read", "glob")
	schema[0].Description = "runs commands"
	schema[1].InputSchema = []byte(`{"type":"object","properties":{}}`)
	schema[2].Source = "builtin"
	mustReplace(t, r, low, schema)
	if _, _, changed := registry.Diff(s4, r.Snapshot()); !slices.Equal(changed, []string{"glob"}) {
		// read is shadowed by mcp/fs, so only glob's source change is visible.
		t.Errorf("changed = %v, want [glob]", changed)
	}
	r.Remove(high)
	if _, _, changed := registry.Diff(s4, r.Snapshot()); !slices.Equal(changed, []string{"glob", "read"}) {
		t.Errorf("changed = %v, want [glob read]", changed)
	}

	if a, rm, _ := registry.Diff(s1, registry.New().Snapshot()); a != nil || !slices.Equal(rm, []string{"bash", "read", "write"}) {
		t.Errorf("Diff to empty: added %v removed %v", a, rm)
	}
}

func TestWatchDiffPerChange(t *testing.T) {
	t.Parallel()
	r := registry.New()
	id := registry.LayerID{Kind: kindMCP, Name: "fs"}
	w, _ := r.Watch()
	defer w.Close()
	mustReplace(t, r, id, answers("1", "a", "b"))
	mustReplace(t, r, id, answers("2", "b", "c"))
	r.Remove(id)
	want := []struct{ added, removed, changed []string }{
		{[]string{"a", "b"}, nil, nil},
		{[]string{"c"}, []string{"a"}, []string{"b"}},
		{nil, []string{"b", "c"}, nil},
	}
	for i, wc := range want {
		c := <-w.C()
		a, rm, ch := registry.Diff(c.Prev, c.Next)
		if !slices.Equal(a, wc.added) || !slices.Equal(rm, wc.removed) || !slices.Equal(ch, wc.changed) {
			t.Errorf("change %d: added %v removed %v changed %v, want %v", i, a, rm, ch, wc)
		}
	}
}

func TestSlowWatcherGetsResync(t *testing.T) {
	t.Parallel()
	r := registry.New()
	id := registry.Layer(kindNative)
	w, _ := r.Watch()
	defer w.Close()
	fast, _ := r.Watch()
	defer fast.Close()

	// Nobody reads w. If delivery blocked, this loop would never finish.
	const extra = 10
	total := registry.WatchBuffer + 1 + extra
	for i := range total {
		mustReplace(t, r, id, answers("", string(rune('a'+i%26))))
		// fast keeps up, and must see every change in order despite w.
		c := <-fast.C()
		if c.Resync || c.Next.Revision() != uint64(i+1) {
			t.Fatalf("fast watcher: resync %v revision %d, want %d", c.Resync, c.Next.Revision(), i+1)
		}
	}

	// The pump may already hold change 1, ready for the reader; behind it the
	// queue filled with WatchBuffer changes, the next one found it full and
	// replaced everything unread with a single resync, and the rest queued
	// after that.
	c := <-w.C()
	inFlight := 0
	if !c.Resync {
		if c.Prev.Revision() != 0 || c.Next.Revision() != 1 {
			t.Fatalf("first change %d→%d, want 0→1 or a resync", c.Prev.Revision(), c.Next.Revision())
		}
		inFlight = 1
		c = <-w.C()
	}
	resyncAt := uint64(registry.WatchBuffer + 1 + inFlight)
	if !c.Resync || c.Prev != nil || c.Next.Revision() != resyncAt {
		t.Fatalf("first change after overflow: resync %v prev %v revision %d; want a resync at %d",
			c.Resync, c.Prev, c.Next.Revision(), resyncAt)
	}
	prev := c.Next
	for range extra - inFlight {
		c := <-w.C()
		if c.Resync || c.Prev != prev || c.Next.Revision() != prev.Revision()+1 {
			t.Fatalf("after resync: resync %v revision %d, want %d", c.Resync, c.Next.Revision(), prev.Revision()+1)
		}
		prev = c.Next
	}
	if prev != r.Snapshot() {
		t.Errorf("slow watcher ends at revision %d, registry at %d", prev.Revision(), r.Snapshot().Revision())
	}
	// The resync snapshot is a full view: the client rebuilds from it.
	if added, _, _ := registry.Diff(nil, prev); len(added) != prev.Len() {
		t.Errorf("Diff(nil, resync) added %d of %d", len(added), prev.Len())
	}
}

func TestWatcherCloseIdempotent(t *testing.T) {
	t.Parallel()
	r := registry.New()
	id := registry.Layer(kindNative)
	w, _ := r.Watch()
	mustReplace(t, r, id, answers("", "a"))
	w.Close()
	w.Close()
	// Publishing after Close neither panics (send on closed channel) nor delivers.
	mustReplace(t, r, id, answers("", "b"))

	for c := range w.C() { // ends: Close closed C
		if c.Next.Revision() != 1 {
			t.Errorf("closed watcher delivered revision %d", c.Next.Revision())
		}
	}
}

func TestWatcherCloseWithUnreadChanges(t *testing.T) {
	t.Parallel()
	r := registry.New()
	w, _ := r.Watch()
	for i := range 3 * registry.WatchBuffer {
		mustReplace(t, r, registry.Layer(kindNative), answers("", strconv.Itoa(i)))
	}
	// Two goroutines closing at once, with the pump holding a change nobody
	// reads: both calls return and C is closed.
	var wg sync.WaitGroup
	wg.Go(w.Close)
	wg.Go(w.Close)
	wg.Wait()
	for range w.C() {
	}
}

func TestWatcherCloseFromReader(t *testing.T) {
	t.Parallel()
	r := registry.New()
	w, _ := r.Watch()
	mustReplace(t, r, registry.Layer(kindNative), answers("", "a"))
	mustReplace(t, r, registry.Layer(kindNative), answers("", "b"))
	for c := range w.C() {
		if c.Next.Revision() == 1 {
			w.Close() // stop after the first change, from inside the loop
		}
	}
}

func TestManyWatchersIndependent(t *testing.T) {
	t.Parallel()
	r := registry.New()
	ws := make([]*registry.Watcher, 5)
	for i := range ws {
		ws[i], _ = r.Watch()
	}
	ws[2].Close()
	mustReplace(t, r, registry.Layer(kindNative), []tool.Tool{answer("x", "")})
	for i, w := range ws {
		c, ok := <-w.C()
		if i == 2 {
			if ok {
				t.Errorf("closed watcher got %+v", c)
			}
			continue
		}
		if !ok || c.Next.Revision() != 1 {
			t.Errorf("watcher %d: %+v %v", i, c, ok)
		}
		w.Close()
	}
}
