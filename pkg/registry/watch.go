package registry

import "sort"

// Change is one published registry change.
type Change struct {
	Prev, Next *Snapshot
	// Resync is set when the watcher fell behind: events were dropped, and
	// Prev is nil; treat Next as a fresh full snapshot.
	Resync bool
}

// WatchBuffer is how many changes a watcher may have unread before it is
// resynchronised instead of blocking the writer.
const WatchBuffer = 64

// Watcher receives every change in revision order until closed.
type Watcher struct {
	r  *Registry
	ch chan Change
}

// Watch subscribes to changes published from now on. The current snapshot is
// returned alongside, read under the same lock, so no change can fall between
// the two. Close the watcher when done.
func (r *Registry) Watch() (*Watcher, *Snapshot) {
	w := &Watcher{r: r, ch: make(chan Change, WatchBuffer)}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.watchers[w] = struct{}{}
	return w, r.current.Load()
}

// C delivers the changes. It is closed by Close.
func (w *Watcher) C() <-chan Change { return w.ch }

// Close unsubscribes and closes C. It is safe to call more than once.
func (w *Watcher) Close() {
	w.r.mu.Lock()
	defer w.r.mu.Unlock()
	if _, ok := w.r.watchers[w]; ok {
		delete(w.r.watchers, w)
		close(w.ch)
	}
}

// deliver runs under the writer lock, so it is the only sender: when the
// buffer is full it empties it and leaves a single resync, and the send
// after the drain cannot block. A slow watcher never holds up the registry.
func (w *Watcher) deliver(c Change) {
	select {
	case w.ch <- c:
		return
	default:
	}
drain:
	for {
		select {
		case <-w.ch:
		default:
			break drain
		}
	}
	w.ch <- Change{Next: c.Next, Resync: true}
}

func sortIDs(ids []LayerID) {
	sort.Slice(ids, func(i, j int) bool { return ids[i].less(ids[j]) })
}

// Diff compares two snapshots by name: tools that appeared, disappeared, or
// whose description, schema, source or providing layer changed. A nil prev
// counts as empty.
func Diff(prev, next *Snapshot) (added, removed, changed []string) {
	if prev == nil {
		prev = emptySnapshot
	}
	for _, e := range next.sorted {
		old, ok := prev.byName[e.Tool.Name]
		switch {
		case !ok:
			added = append(added, e.Tool.Name)
		case old.Tool != e.Tool && !sameTool(old, e):
			changed = append(changed, e.Tool.Name)
		}
	}
	for _, e := range prev.sorted {
		if _, ok := next.byName[e.Tool.Name]; !ok {
			removed = append(removed, e.Tool.Name)
		}
	}
	return added, removed, changed
}

func sameTool(a, b *Entry) bool {
	return a.Layer == b.Layer && a.Tool.Description == b.Tool.Description &&
		a.Tool.Source == b.Tool.Source && string(a.Tool.InputSchema) == string(b.Tool.InputSchema)
}
