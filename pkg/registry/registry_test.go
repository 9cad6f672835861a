package registry_test

import (
	"bytes"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

func TestNewIsEmpty(t *testing.T) {
	t.Parallel()
	r := registry.New()
	s := r.Snapshot()
	if s.Revision() != 0 || s.Len() != 0 || len(s.Entries()) != 0 || len(s.Shadowed()) != 0 || len(r.Layers()) != 0 {
		t.Errorf("new registry: revision %d, %d tools, %d shadowed, layers %v", s.Revision(), s.Len(), len(s.Shadowed()), r.Layers())
	}
}

func TestLaterKindWins(t *testing.T) {
	t.Parallel()
	kinds := testKinds
	for i, lo := range kinds {
		for _, hi := range kinds[i+1:] {
			t.Run(lo.String()+"<"+hi.String(), func(t *testing.T) {
				r := registry.New()
				// Register the winner first: the order of Replace calls must not matter.
				mustReplace(t, r, registry.Layer(hi), answers(hi.String(), "same", hi.String()+"_only"))
				mustReplace(t, r, registry.Layer(lo), answers(lo.String(), "same", lo.String()+"_only"))
				s := r.Snapshot()
				e, ok := s.Lookup("same")
				if !ok || e.Layer != registry.Layer(hi) || e.Tool.Description != hi.String() {
					t.Fatalf("Lookup(same) = %+v, want the %s tool", e, hi)
				}
				if got := call(r, "same").Output; got != hi.String() {
					t.Errorf("Execute(same) ran the %s tool, want %s", got, hi)
				}
				want := []registry.Shadow{{Name: "same", Hidden: registry.Layer(lo), WinnerIn: registry.Layer(hi)}}
				if !slices.Equal(s.Shadowed(), want) {
					t.Errorf("Shadowed = %+v, want %+v", s.Shadowed(), want)
				}
				if s.Len() != 3 || s.LayerCount(registry.Layer(lo)) != 2 || s.LayerCount(registry.Layer(hi)) != 2 {
					t.Errorf("Len %d, counts %d/%d; want 3 visible, 2 per layer before shadowing",
						s.Len(), s.LayerCount(registry.Layer(lo)), s.LayerCount(registry.Layer(hi)))
				}
				if s.KindCount(lo) != 1 || s.KindCount(hi) != 2 {
					t.Errorf("KindCount %s=%d %s=%d, want 1 and 2", lo, s.KindCount(lo), hi, s.KindCount(hi))
				}
			})
		}
	}
}

func TestAllKindsOneName(t *testing.T) {
	t.Parallel()
	r := registry.New()
	kinds := testKinds
	for _, k := range slices.Backward(kinds) {
		mustReplace(t, r, registry.Layer(k), answers(k.String(), "x"))
	}
	if got := call(r, "x").Output; got != "mcp" {
		t.Errorf("x ran from %s, want mcp", got)
	}
	// Every loser reports the final winner, not the layer just above it.
	var want []registry.Shadow
	for _, k := range kinds[:len(kinds)-1] {
		want = append(want, registry.Shadow{Name: "x", Hidden: registry.Layer(k), WinnerIn: registry.Layer(kindMCP)})
	}
	if !slices.Equal(r.Snapshot().Shadowed(), want) {
		t.Errorf("Shadowed =\n%+v\nwant\n%+v", r.Snapshot().Shadowed(), want)
	}
	// Peel the winners off one by one: the next kind down takes over.
	for i := len(kinds) - 1; i > 0; i-- {
		r.Remove(registry.Layer(kinds[i]))
		if got := call(r, "x").Output; got != kinds[i-1].String() {
			t.Errorf("after removing %s, x ran from %s, want %s", kinds[i], got, kinds[i-1])
		}
		if n := len(r.Snapshot().Shadowed()); n != i-1 {
			t.Errorf("after removing %s, %d shadowed, want %d", kinds[i], n, i-1)
		}
	}
}

func TestSameKindOrderedByName(t *testing.T) {
	t.Parallel()
	r := registry.New()
	a := registry.LayerID{Kind: kindMCP, Name: "alpha"}
	b := registry.LayerID{Kind: kindMCP, Name: "beta"}
	mustReplace(t, r, b, answers("beta", "read"))
	mustReplace(t, r, a, answers("alpha", "read"))
	if got := call(r, "read").Output; got != "beta" {
		t.Errorf("read ran from %s, want beta (the name that sorts last)", got)
	}
	if got := r.Layers(); !slices.Equal(got, []registry.LayerID{a, b}) {
		t.Errorf("Layers = %v, want [mcp/alpha mcp/beta]", got)
	}
}

func TestLayersInPrecedenceOrder(t *testing.T) {
	t.Parallel()
	r := registry.New()
	ids := []registry.LayerID{
		{Kind: kindMCP, Name: "z"},
		registry.Layer(kindDebug),
		{Kind: kindMCP, Name: "a"},
		registry.Layer(kindNative),
		{Kind: kindA2A, Name: "reviewer"},
	}
	for _, id := range ids {
		mustReplace(t, r, id, nil)
	}
	want := []registry.LayerID{ids[1], ids[4], ids[3], ids[2], ids[0]}
	if got := r.Layers(); !slices.Equal(got, want) {
		t.Errorf("Layers = %v, want %v", got, want)
	}
}

func TestEntriesByteOrder(t *testing.T) {
	t.Parallel()
	r := registry.New()
	mustReplace(t, r, registry.Layer(kindMCP), answers("m", "b", "B", "a-b", "é"))
	mustReplace(t, r, registry.Layer(kindBuiltin), answers("b", "_x", "a", "a_b", "Z", "0", "a-b"))
	// Byte order: digits < upper case < "_" < lower case, "-" (0x2d) < "_" (0x5f),
	// and a multi-byte character after all ASCII. Never locale or case folding.
	want := []string{"0", "B", "Z", "_x", "a", "a-b", "a_b", "b", "é"}
	if got := names(r.Snapshot()); !slices.Equal(got, want) {
		t.Errorf("Entries = %q, want %q", got, want)
	}
	if !slices.IsSorted(names(r.Snapshot())) {
		t.Error("Entries not sorted")
	}
}

func TestSeek(t *testing.T) {
	t.Parallel()
	r := registry.New()
	mustReplace(t, r, registry.Layer(kindNative), answers("", "a", "b", "c", "d"))
	s := r.Snapshot()
	for _, tt := range []struct {
		after string
		want  int
	}{{"", 0}, {"a", 1}, {"b", 2}, {"bb", 2}, {"d", 4}, {"zz", 4}} {
		if got := s.Seek(tt.after); got != tt.want {
			t.Errorf("Seek(%q) = %d, want %d", tt.after, got, tt.want)
		}
	}
}

func TestReplaceLeavesOtherLayersUntouched(t *testing.T) {
	t.Parallel()
	r := registry.New()
	fs := registry.LayerID{Kind: kindMCP, Name: "fs"}
	git := registry.LayerID{Kind: kindMCP, Name: "git"}
	mustReplace(t, r, fs, answers("fs1", "fs_read", "fs_write"))
	mustReplace(t, r, git, answers("git1", "git_log", "git_diff"))
	mustReplace(t, r, registry.Layer(kindBuiltin), answers("b", "bash"))
	before := r.Snapshot()

	mustReplace(t, r, fs, answers("fs2", "fs_read", "fs_stat"))
	after := r.Snapshot()

	if got := names(after); !slices.Equal(got, []string{"bash", "fs_read", "fs_stat", "git_diff", "git_log"}) {
		t.Errorf("names = %v", got)
	}
	for _, n := range []string{"git_log", "git_diff", "bash"} {
		b, _ := before.Lookup(n)
		a, ok := after.Lookup(n)
		// The very same tool value: other layers are not rebuilt or copied.
		if !ok || a.Tool != b.Tool || a.Layer != b.Layer {
			t.Errorf("%s changed: before %+v after %+v", n, b, a)
		}
	}
	if got := call(r, "fs_read").Output; got != "fs2" {
		t.Errorf("fs_read ran version %s, want fs2", got)
	}
	if res := call(r, "fs_write"); res.Resolved() != tool.OutcomeUnknownTool {
		t.Errorf("fs_write survived its layer's replace: %+v", res)
	}
	// The earlier snapshot is immutable: it still shows the old layer.
	if got := names(before); !slices.Equal(got, []string{"bash", "fs_read", "fs_write", "git_diff", "git_log"}) {
		t.Errorf("old snapshot changed: %v", got)
	}
}

func TestReplaceDuplicateNameRejected(t *testing.T) {
	t.Parallel()
	r := registry.New()
	id := registry.Layer(kindHTTP)
	mustReplace(t, r, id, answers("v1", "get_post"))
	before := r.Snapshot()

	err := r.Replace(id, answers("v2", "get_post", "list_posts", "get_post"))
	if err == nil || err.Error() != `layer http/http: tool name "get_post" appears twice` {
		t.Fatalf("err = %v, want the duplicate named with its layer", err)
	}
	if r.Snapshot() != before {
		t.Error("a rejected Replace published a snapshot")
	}
	if got := call(r, "get_post").Output; got != "v1" {
		t.Errorf("get_post = %s, want the untouched v1", got)
	}
}

func TestReplaceInvalidToolRejected(t *testing.T) {
	t.Parallel()
	r := registry.New()
	id := registry.Layer(kindNative)
	tests := []struct {
		tool tool.Tool
		is   error
		msg  string
	}{
		{tool.Tool{Run: answer("x", "").Run}, tool.ErrNoName, "layer native/native: tool: name is required"},
		{tool.Tool{Name: "norun"}, tool.ErrNoFunc, `layer native/native: tool: execute function is required (tool "norun")`},
		{tool.Tool{Name: "badschema", Run: answer("x", "").Run, InputSchema: []byte("{")},
			nil, `layer native/native: tool "badschema": input schema is not valid JSON`},
	}
	for _, tt := range tests {
		err := r.Replace(id, []tool.Tool{answer("fine", ""), tt.tool})
		if err == nil || err.Error() != tt.msg || (tt.is != nil && !errors.Is(err, tt.is)) {
			t.Errorf("err = %v, want %q", err, tt.msg)
		}
	}
	if r.Snapshot().Revision() != 0 || len(r.Layers()) != 0 {
		t.Errorf("rejected Replace changed the registry: revision %d layers %v", r.Snapshot().Revision(), r.Layers())
	}
}

func TestReplaceFillsDefaultsAndCopies(t *testing.T) {
	t.Parallel()
	r := registry.New()
	tools := answers("mine", "t")
	mustReplace(t, r, registry.Layer(kindNative), tools)
	// The caller's slice stays theirs: changing it afterwards changes nothing.
	tools[0].Name = "renamed"
	tools[0].Description = "changed"
	e, ok := r.Snapshot().Lookup("t")
	if !ok {
		t.Fatal("t missing")
	}
	if e.Tool.Description != "mine" || e.Tool.Source != tool.DefaultSource || string(e.Tool.InputSchema) != `{"type":"object"}` {
		t.Errorf("registered tool = %+v, want defaults filled and the caller's edits ignored", *e.Tool)
	}
	if tools[0].Source != "" {
		t.Error("Replace filled defaults into the caller's slice")
	}
}

func TestEmptyReplaceKeepsLayer(t *testing.T) {
	t.Parallel()
	r := registry.New()
	id := registry.LayerID{Kind: kindMCP, Name: "quiet"}
	mustReplace(t, r, id, answers("", "a"))
	mustReplace(t, r, id, nil)
	if got := r.Layers(); !slices.Equal(got, []registry.LayerID{id}) {
		t.Errorf("Layers = %v, want the empty layer kept", got)
	}
	if s := r.Snapshot(); s.Len() != 0 || s.LayerCount(id) != 0 || s.Revision() != 2 {
		t.Errorf("Len %d LayerCount %d revision %d", s.Len(), s.LayerCount(id), s.Revision())
	}
}

func TestRemove(t *testing.T) {
	t.Parallel()
	r := registry.New()
	low := registry.Layer(kindBuiltin)
	high := registry.LayerID{Kind: kindMCP, Name: "fs"}
	mustReplace(t, r, low, answers("builtin", "read", "bash"))
	mustReplace(t, r, high, answers("mcp", "read"))

	r.Remove(high)
	s := r.Snapshot()
	if s.Revision() != 3 || !slices.Equal(r.Layers(), []registry.LayerID{low}) {
		t.Errorf("after Remove: revision %d layers %v", s.Revision(), r.Layers())
	}
	if got := call(r, "read").Output; got != "builtin" || len(s.Shadowed()) != 0 {
		t.Errorf("read = %s, shadowed %v; want the builtin back and nothing shadowed", got, s.Shadowed())
	}

	// Removing an absent layer publishes nothing.
	r.Remove(high)
	r.Remove(registry.LayerID{Kind: kindA2A, Name: "never"})
	if r.Snapshot() != s {
		t.Error("removing an absent layer published a snapshot")
	}
}

func TestRevisionsIncreaseByOne(t *testing.T) {
	t.Parallel()
	r := registry.New()
	id := registry.Layer(kindNative)
	steps := []func(){
		func() { mustReplace(t, r, id, answers("", "a")) },
		func() { mustReplace(t, r, id, answers("", "a")) }, // identical content is still a change
		func() { mustReplace(t, r, registry.Layer(kindSkill), nil) },
		func() { r.Remove(id) },
		func() { _ = r.Replace(id, answers("", "d", "d")) }, // rejected: no revision
		func() { r.Remove(id) },                             // absent: no revision
		func() { mustReplace(t, r, id, answers("", "b")) },
	}
	want := []uint64{1, 2, 3, 4, 4, 4, 5}
	for i, step := range steps {
		step()
		if got := r.Snapshot().Revision(); got != want[i] {
			t.Errorf("step %d: revision %d, want %d", i, got, want[i])
		}
	}
}

func TestLookupUnknownTool(t *testing.T) {
	t.Parallel()
	r := registry.New()
	mustReplace(t, r, registry.Layer(kindNative), answers("", "known"))
	for _, name := range []string{"nope", "", "Known", "known "} {
		res := call(r, name)
		if res.Output != "unknown tool: "+name || !res.IsError || res.Outcome != tool.OutcomeUnknownTool {
			t.Errorf("call(%q) = %+v, want unknown tool", name, res)
		}
	}
	if res := registry.UnknownTool("x"); res.Output != "unknown tool: x" || res.Resolved() != tool.OutcomeUnknownTool {
		t.Errorf("UnknownTool = %+v", res)
	}
}

func TestShadowWarnedOnce(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	r := registry.New(registry.WithLogger(slog.New(slog.NewTextHandler(&buf, nil))))
	mustReplace(t, r, registry.Layer(kindBuiltin), answers("", "read", "bash"))
	mustReplace(t, r, registry.LayerID{Kind: kindMCP, Name: "fs"}, answers("", "read"))
	mustReplace(t, r, registry.LayerID{Kind: kindMCP, Name: "fs"}, answers("", "read")) // steady state
	mustReplace(t, r, registry.Layer(kindSkill), nil)
	log := buf.String()
	if n := strings.Count(log, "tool shadowed by a later source"); n != 1 {
		t.Errorf("%d warnings, want exactly 1:\n%s", n, log)
	}
	for _, want := range []string{"level=WARN", "tool=read", "hidden=builtin/builtin", "winner=mcp/fs"} {
		if !strings.Contains(log, want) {
			t.Errorf("warning lacks %q:\n%s", want, log)
		}
	}
}

func TestWithOnChange(t *testing.T) {
	t.Parallel()
	var seen [][2]uint64
	r := registry.New(registry.WithOnChange(func(prev, next *registry.Snapshot) {
		seen = append(seen, [2]uint64{prev.Revision(), next.Revision()})
	}))
	mustReplace(t, r, registry.Layer(kindNative), answers("", "a"))
	r.Remove(registry.Layer(kindNative))
	_ = r.Replace(registry.Layer(kindNative), answers("", "a", "a"))
	if want := [][2]uint64{{0, 1}, {1, 2}}; !slices.Equal(seen, want) {
		t.Errorf("OnChange saw %v, want %v", seen, want)
	}
}
