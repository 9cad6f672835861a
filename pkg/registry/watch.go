package registry

import (
	"reflect"
	"sort"
	"sync"
)

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

// Watcher receives every change in revision order until closed. Each
// change's Prev is the Next of the change before it, unless it is a Resync.
type Watcher struct {
	r    *Registry
	ch   chan Change   // unbuffered: the pump hands over one change at a time
	wake chan struct{} // capacity 1: the queue grew
	done chan struct{} // closed by Close
	gone chan struct{} // closed when the pump has exited and closed ch

	// The queue sits behind a mutex that only the writer and the pump take,
	// never the reader: when it overflows it is replaced by one resync with
	// no reader able to take a change out from under that swap. (Draining a
	// buffered channel instead races with the reader, who can then receive a
	// change from the middle of the dropped run without any Resync flag.)
	mu    sync.Mutex
	queue [WatchBuffer]Change
	head  int
	n     int
}

// Watch subscribes to changes published from now on. The current snapshot is
// returned alongside, read under the same lock, so no change can fall between
// the two. Close the watcher when done: it owns a goroutine until then.
func (r *Registry) Watch() (*Watcher, *Snapshot) {
	w := &Watcher{
		r:    r,
		ch:   make(chan Change),
		wake: make(chan struct{}, 1),
		done: make(chan struct{}),
		gone: make(chan struct{}),
	}
	go w.pump()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.watchers[w] = struct{}{}
	return w, r.current.Load()
}

// C delivers the changes. It is closed by Close; changes not yet received
// then are dropped.
func (w *Watcher) C() <-chan Change { return w.ch }

// Close unsubscribes, stops delivery and closes C. It is safe to call more
// than once and from any goroutine, including the one reading C.
func (w *Watcher) Close() {
	w.r.mu.Lock()
	_, ok := w.r.watchers[w]
	delete(w.r.watchers, w)
	w.r.mu.Unlock()
	if ok {
		close(w.done)
	}
	<-w.gone
}

// deliver runs under the writer lock, so changes are queued in revision
// order. It never blocks: when the reader has WatchBuffer changes unread,
// they are replaced by a single resync to the newest snapshot.
func (w *Watcher) deliver(c Change) {
	w.mu.Lock()
	if w.n == WatchBuffer {
		clear(w.queue[:])
		w.head, w.n = 0, 0
		c = Change{Next: c.Next, Resync: true}
	}
	w.queue[(w.head+w.n)%WatchBuffer] = c
	w.n++
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default: // the pump is already due to look at the queue
	}
}

// pump hands queued changes to the reader one at a time until Close.
func (w *Watcher) pump() {
	defer close(w.gone)
	defer close(w.ch)
	for {
		w.mu.Lock()
		if w.n == 0 {
			w.mu.Unlock()
			select {
			case <-w.wake:
				continue
			case <-w.done:
				return
			}
		}
		c := w.queue[w.head]
		w.queue[w.head] = Change{} // let old snapshots be collected
		w.head = (w.head + 1) % WatchBuffer
		w.n--
		w.mu.Unlock()
		select {
		case w.ch <- c:
		case <-w.done:
			return
		}
	}
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
		a.Tool.Source == b.Tool.Source && string(a.Tool.InputSchema) == string(b.Tool.InputSchema) &&
		string(a.Tool.OutputSchema) == string(b.Tool.OutputSchema) && reflect.DeepEqual(a.Tool.Annotations, b.Tool.Annotations)
}
