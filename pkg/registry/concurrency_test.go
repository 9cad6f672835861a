package registry_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

const (
	concWriters   = 4
	concPerLayer  = 32   // tools per writer layer, all tagged with the layer's version
	concMinVers   = 20   // versions each writer publishes at least
	concCalls     = 2000 // iterations per executor, three calls each
	concExecutors = 64
)

// toolNames[w][i] is writer w's i-th tool name, built once so the callers
// spend their time in the registry rather than in fmt.
var toolNames = func() (n [concWriters][concPerLayer]string) {
	for w := range concWriters {
		for i := range concPerLayer {
			n[w][i] = fmt.Sprintf("w%d_t%02d", w, i)
		}
	}
	return n
}()

func writerLayer(w int) registry.LayerID {
	return registry.LayerID{Kind: kindMCP, Name: "w" + strconv.Itoa(w)}
}

// versionTools is version v of writer w's layer: concPerLayer tools whose
// description and output carry "w:v", plus the names every version keeps.
func versionTools(w, v int) []tool.Tool {
	tag := fmt.Sprintf("%d:%d", w, v)
	tools := make([]tool.Tool, 0, concPerLayer+1)
	for i := range concPerLayer {
		tools = append(tools, answer(toolNames[w][i], tag))
	}
	switch w {
	case 0:
		tools = append(tools, answer("stable", tag))
	case 1:
		// Also offered by the builtin layer below: w1 must win in every snapshot.
		tools = append(tools, answer("contested", tag))
	}
	return tools
}

// TestConcurrentExecuteAndReplace runs 64 callers while writers replace whole
// layers again and again. Every call on a name present in all versions must
// succeed, a caller must never see a writer's version go backwards, and every
// snapshot must hold each layer complete and from a single version.
func TestConcurrentExecuteAndReplace(t *testing.T) {
	t.Parallel()
	r := registry.New()
	mustReplace(t, r, registry.Layer(kindBuiltin), answers("builtin", "contested", "bash"))
	for w := range concWriters {
		mustReplace(t, r, writerLayer(w), versionTools(w, 0))
	}
	flap := registry.LayerID{Kind: kindA2A, Name: "flap"}

	// The callers do a fixed amount of work; the writers keep replacing
	// until the callers are done, so every call races with a Replace.
	stop := make(chan struct{})
	var writers, readers sync.WaitGroup
	versions := make([]int, concWriters)
	for w := range concWriters {
		writers.Go(func() {
			for v := 1; ; v++ {
				if v > concMinVers {
					select {
					case <-stop:
						versions[w] = v - 1
						return
					default:
					}
				}
				if err := r.Replace(writerLayer(w), versionTools(w, v)); err != nil {
					t.Errorf("writer %d: %v", w, err)
					return
				}
				if w == 0 { // one writer also adds and drops a whole layer
					if v%2 == 0 {
						r.Remove(flap)
					} else if err := r.Replace(flap, answers("flap", "flap_tool")); err != nil {
						t.Errorf("flap: %v", err)
						return
					}
				}
			}
		})
	}

	for g := range concExecutors {
		readers.Go(func() {
			ctx := context.Background()
			lastVersion := make([]int, concWriters)
			var lastRevision uint64
			for i := range concCalls {
				if err := checkCalls(ctx, r, g, i, lastVersion); err != nil {
					t.Errorf("executor %d: %v", g, err)
					return
				}
				if i%32 == 0 {
					rev, err := checkSnapshot(r.Snapshot(), lastRevision)
					if err != nil {
						t.Errorf("executor %d: %v", g, err)
						return
					}
					lastRevision = rev
				}
			}
		})
	}

	readers.Wait()
	close(stop)
	writers.Wait()
	if t.Failed() {
		return
	}

	final := r.Snapshot()
	want := uint64(1 + concWriters + versions[0]) // the flap layer: one change per writer-0 version
	for _, v := range versions {
		want += uint64(v)
	}
	if final.Revision() != want {
		t.Errorf("final revision %d, want %d (versions %v)", final.Revision(), want, versions)
	}
	if _, err := checkSnapshot(final, 0); err != nil {
		t.Error(err)
	}
	for w := range concWriters {
		if e, _ := final.Lookup(toolNames[w][0]); e.Tool.Description != fmt.Sprintf("%d:%d", w, versions[w]) {
			t.Errorf("writer %d ends at %s, want version %d", w, e.Tool.Description, versions[w])
		}
	}
	t.Logf("writers published %v versions during %d calls", versions, 3*concCalls*concExecutors)
}

// checkCalls makes the calls one executor iteration makes.
func checkCalls(ctx context.Context, r *registry.Registry, g, i int, lastVersion []int) error {
	res := runIn(ctx, r, "stable")
	if res.IsError || !strings.HasPrefix(res.Output, "0:") {
		return fmt.Errorf("stable: %+v", res)
	}
	res = runIn(ctx, r, "contested")
	if res.IsError || !strings.HasPrefix(res.Output, "1:") {
		return fmt.Errorf("contested ran %q, want writer 1's tool", res.Output)
	}
	w := (g + i) % concWriters
	name := toolNames[w][(g*7+i)%concPerLayer]
	res = runIn(ctx, r, name)
	if res.IsError {
		return fmt.Errorf("%s: %+v", name, res)
	}
	_, vs, _ := strings.Cut(res.Output, ":")
	v, _ := strconv.Atoi(vs)
	if res.Output != strconv.Itoa(w)+":"+vs || v < lastVersion[w] {
		return fmt.Errorf("%s ran %q after seeing version %d", name, res.Output, lastVersion[w])
	}
	lastVersion[w] = v
	return nil
}

// checkSnapshot verifies one snapshot is whole: each writer's layer is
// complete and every one of its tools carries the same version.
func checkSnapshot(s *registry.Snapshot, lastRevision uint64) (uint64, error) {
	if s.Revision() < lastRevision {
		return 0, fmt.Errorf("revision went back from %d to %d", lastRevision, s.Revision())
	}
	for w := range concWriters {
		id := writerLayer(w)
		want := concPerLayer
		if w < 2 { // writers 0 and 1 also carry stable and contested
			want++
		}
		if n := s.LayerCount(id); n != want {
			return 0, fmt.Errorf("revision %d: layer %s has %d tools", s.Revision(), id, n)
		}
		var tag string
		for i := range concPerLayer {
			e, ok := s.Lookup(toolNames[w][i])
			if !ok || e.Layer != id {
				return 0, fmt.Errorf("revision %d: w%d_t%02d missing", s.Revision(), w, i)
			}
			if i == 0 {
				tag = e.Tool.Description
			} else if e.Tool.Description != tag {
				return 0, fmt.Errorf("revision %d: layer %s mixes versions %s and %s", s.Revision(), id, tag, e.Tool.Description)
			}
		}
	}
	entries := s.Entries()
	if len(entries) != s.Len() {
		return 0, fmt.Errorf("revision %d: %d entries, Len %d", s.Revision(), len(entries), s.Len())
	}
	for i := 1; i < len(entries); i++ {
		if entries[i-1].Tool.Name >= entries[i].Tool.Name {
			return 0, fmt.Errorf("revision %d: entries out of order at %d", s.Revision(), i)
		}
	}
	if sh := s.Shadowed(); len(sh) != 1 || sh[0].Name != "contested" || sh[0].WinnerIn != writerLayer(1) {
		return 0, fmt.Errorf("revision %d: shadowed %+v", s.Revision(), sh)
	}
	return s.Revision(), nil
}

// TestConcurrentWatchers has watchers read while writers publish: each sees
// strictly increasing revisions, either consecutive or after a resync.
func TestConcurrentWatchers(t *testing.T) {
	t.Parallel()
	r := registry.New()
	const changes = 300
	var wg sync.WaitGroup
	for range 4 {
		w, start := r.Watch()
		wg.Go(func() {
			defer w.Close()
			last := start
			for last.Revision() < changes {
				c := <-w.C()
				if c.Resync {
					if c.Prev != nil || c.Next.Revision() <= last.Revision() {
						t.Errorf("resync from %d to %d", last.Revision(), c.Next.Revision())
						return
					}
				} else if c.Prev != last || c.Next.Revision() != last.Revision()+1 {
					t.Errorf("change %d→%d after %d", c.Prev.Revision(), c.Next.Revision(), last.Revision())
					return
				}
				last = c.Next
			}
		})
	}
	for i := range changes {
		mustReplace(t, r, registry.LayerID{Kind: kindMCP, Name: strconv.Itoa(i % 3)}, answers("", "t"+strconv.Itoa(i)))
	}
	wg.Wait()
}
