package registry

import (
	"sort"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

// Entry is one registered tool together with the layer that provides it.
type Entry struct {
	Tool  *tool.Tool
	Layer LayerID
}

// Shadow records a tool hidden by a same-named tool in a later layer.
type Shadow struct {
	Name     string
	Hidden   LayerID
	WinnerIn LayerID
}

// Snapshot is an immutable view of the registry at one revision. Share it
// freely; never modify what it returns.
type Snapshot struct {
	revision uint64
	byName   map[string]*Entry
	sorted   []*Entry
	shadowed []Shadow
	counts   map[LayerID]int
}

var emptySnapshot = &Snapshot{byName: map[string]*Entry{}, counts: map[LayerID]int{}}

// Revision increases by one with every published change.
func (s *Snapshot) Revision() uint64 { return s.revision }

// Lookup finds a tool by exact name.
func (s *Snapshot) Lookup(name string) (*Entry, bool) {
	e, ok := s.byName[name]
	return e, ok
}

// Entries returns every visible tool sorted by name in byte order. The slice
// is shared: do not modify it.
func (s *Snapshot) Entries() []*Entry { return s.sorted }

// Len is the number of visible tools.
func (s *Snapshot) Len() int { return len(s.sorted) }

// Shadowed lists the tools hidden by later layers, sorted by name then layer.
func (s *Snapshot) Shadowed() []Shadow { return s.shadowed }

// LayerCount is the number of tools a layer contributes, before shadowing.
func (s *Snapshot) LayerCount(id LayerID) int { return s.counts[id] }

// KindCount is the number of visible tools whose layer is of kind k.
func (s *Snapshot) KindCount(k Kind) int {
	n := 0
	for _, e := range s.sorted {
		if e.Layer.Kind == k {
			n++
		}
	}
	return n
}

// Seek returns the index of the first entry whose name sorts after `after`
// in byte order, for paging by name: Entries()[Seek(last):] is the rest of
// the list after the page that ended with last. Seek("") is 0.
func (s *Snapshot) Seek(after string) int {
	return sort.Search(len(s.sorted), func(i int) bool { return s.sorted[i].Tool.Name > after })
}

// build makes the snapshot for a set of layers: walk them in precedence
// order so that a later layer overwrites an earlier one's name.
func build(revision uint64, layers map[LayerID][]*tool.Tool) *Snapshot {
	ids := make([]LayerID, 0, len(layers))
	total := 0
	for id, tools := range layers {
		ids = append(ids, id)
		total += len(tools)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i].less(ids[j]) })

	s := &Snapshot{
		revision: revision,
		byName:   make(map[string]*Entry, total),
		counts:   make(map[LayerID]int, len(ids)),
	}
	entries := make([]Entry, 0, total)
	for _, id := range ids {
		s.counts[id] = len(layers[id])
		for _, t := range layers[id] {
			if prev, ok := s.byName[t.Name]; ok {
				s.shadowed = append(s.shadowed, Shadow{Name: t.Name, Hidden: prev.Layer, WinnerIn: id})
				prev.Tool, prev.Layer = t, id
				continue
			}
			entries = append(entries, Entry{Tool: t, Layer: id})
			s.byName[t.Name] = &entries[len(entries)-1]
		}
	}
	s.sorted = make([]*Entry, len(entries))
	for i := range entries {
		s.sorted[i] = &entries[i]
	}
	sort.Slice(s.sorted, func(i, j int) bool { return s.sorted[i].Tool.Name < s.sorted[j].Tool.Name })
	// A name shadowed twice (three layers) must report the final winner for each loser.
	for i := range s.shadowed {
		s.shadowed[i].WinnerIn = s.byName[s.shadowed[i].Name].Layer
	}
	sortShadows(s.shadowed)
	return s
}

// sortShadows orders shadowings by name, then by the hidden layer.
func sortShadows(list []Shadow) {
	sort.Slice(list, func(i, j int) bool {
		a, b := list[i], list[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Hidden.less(b.Hidden)
	})
}
