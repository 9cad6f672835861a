package core

import (
	"context"
	"sync"
	"time"

	"github.com/toolnexus/toolnexus/internal/policy"
	"github.com/toolnexus/toolnexus/pkg/feature"
	"github.com/toolnexus/toolnexus/pkg/registry"
)

// Subscriptions to resource changes. A front-end subscribes a listener to a
// resource by its URI as served; the hub subscribes the owning server once
// per resource however many listeners share it, and unsubscribes it with
// the last one. The server's notifications/resources/updated is mapped to
// the served URI and handed to that URI's listeners only — never to a
// listener of another resource or one that asked nobody.
//
// A server that floods notifications cannot flood anyone: an update only
// marks its URI due, and one dispatcher goroutine tells each due URI's
// listeners once per round, rounds at least updateInterval apart, so any
// number of updates of one resource within a round reach each listener as
// one. And the listeners are capped (maxListeners) so a caller
// subscribing to everything cannot exhaust the server.

// maxListeners bounds the subscriptions of all front-ends together.
const maxListeners = 100_000

// unsubscribeBound bounds telling a server a subscription ended.
const unsubscribeBound = 5 * time.Second

// updateInterval is the least time between two rounds of notifications:
// a listener hears of one resource at most this often.
const updateInterval = 100 * time.Millisecond

// upstreamKey is one resource of one server, by the server's own URI.
type upstreamKey struct {
	layer registry.LayerID
	uri   string
}

// upstreamSub is the server's subscription to one resource.
type upstreamSub struct {
	count  int // listeners; guarded by hub.mu
	server feature.Server
	op     sync.Mutex // orders Subscribe and Unsubscribe on the server
	on     bool       // subscribed on the server; guarded by op
}

type listener struct {
	served string
	key    upstreamKey
	notify func(uri string)
}

type resourceHub struct {
	mu        sync.Mutex
	upstream  map[upstreamKey]*upstreamSub
	listeners map[string]map[*listener]struct{} // by served URI
	count     int
	due       map[string]struct{}
	wake      chan struct{}
	// The dispatcher starts with the first listener (started, under mu)
	// and ends at close.
	started bool
	closed  bool
	stop    chan struct{}
	done    chan struct{}
}

func newResourceHub() *resourceHub {
	return &resourceHub{upstream: map[upstreamKey]*upstreamSub{}, listeners: map[string]map[*listener]struct{}{},
		due: map[string]struct{}{}, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
}

// close stops the dispatcher; listeners are told nothing more.
func (h *resourceHub) close() {
	h.mu.Lock()
	started := h.started
	if !h.closed {
		h.closed = true
		close(h.stop)
	}
	h.mu.Unlock()
	if started {
		<-h.done
	}
}

// SubscribeResource subscribes notify to changes of a resource, by its URI
// as served, checked as a read is (allowlists, policy). notify gets the
// served URI, on the hub's dispatcher: it must not hold it long. cancel
// ends the subscription (and the server's, with the last listener).
func (c *Core) SubscribeResource(ctx context.Context, fc FeatureCall, uri string, notify func(uri string)) (cancel func(), err error) {
	snap := c.features.Snapshot()
	f := featureFlow{FeatureCall: fc, method: methodSubscribe, action: policy.ActionRead}
	t := f.routeResource(snap, uri)
	err = c.runFeature(ctx, &f, func(ctx context.Context) (int, error) {
		if set, _ := snap.Set(t.Layer); !set.Subscriptions {
			return 0, feature.Errorf(feature.InvalidArgument, "resources/subscribe %s: MCP server %q does not offer subscriptions", f.target, t.Layer.Name)
		}
		var err error
		cancel, err = c.hub.add(ctx, t, f.target, notify)
		return 0, err
	})
	if err != nil {
		return nil, err
	}
	return cancel, nil
}

func (h *resourceHub) add(ctx context.Context, t registry.Target, served string, notify func(string)) (func(), error) {
	l := &listener{served: served, key: upstreamKey{t.Layer, t.URI}, notify: notify}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, feature.Errorf(feature.Unavailable, "resources/subscribe: the server is shutting down")
	}
	if h.count >= maxListeners {
		h.mu.Unlock()
		return nil, &feature.Error{Kind: feature.Throttled, Limit: "subscriptions",
			Msg: "resources/subscribe: the server holds the most subscriptions it takes; unsubscribe from others first"}
	}
	if !h.started {
		h.started = true
		go h.dispatch()
	}
	st := h.upstream[l.key]
	if st == nil {
		st = &upstreamSub{server: t.Server}
		h.upstream[l.key] = st
	}
	st.count++
	h.count++
	set := h.listeners[served]
	if set == nil {
		set = map[*listener]struct{}{}
		h.listeners[served] = set
	}
	set[l] = struct{}{}
	h.mu.Unlock()
	if err := h.reconcile(ctx, l.key, st); err != nil {
		h.remove(l)
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(func() { h.remove(l) }) }, nil
}

func (h *resourceHub) remove(l *listener) {
	h.mu.Lock()
	st := h.upstream[l.key]
	if set := h.listeners[l.served]; set != nil {
		delete(set, l)
		if len(set) == 0 {
			delete(h.listeners, l.served)
		}
	}
	h.count--
	st.count--
	h.mu.Unlock()
	// Unsubscribing is best effort: a server that is gone has forgotten.
	ctx, cancel := context.WithTimeout(context.Background(), unsubscribeBound)
	defer cancel()
	_ = h.reconcile(ctx, l.key, st)
}

// reconcile makes the server's subscription match whether anyone listens.
// Calls for one resource are ordered by st.op, so a subscribe racing the
// last unsubscribe always ends subscribed when someone listens.
func (h *resourceHub) reconcile(ctx context.Context, key upstreamKey, st *upstreamSub) error {
	st.op.Lock()
	defer st.op.Unlock()
	h.mu.Lock()
	want := st.count > 0
	h.mu.Unlock()
	switch {
	case want && !st.on:
		if err := st.server.Subscribe(ctx, key.uri); err != nil {
			return err
		}
		st.on = true
	case !want && st.on:
		_ = st.server.Unsubscribe(ctx, key.uri)
		st.on = false
	}
	if !want {
		h.mu.Lock()
		if st.count == 0 && h.upstream[key] == st {
			delete(h.upstream, key)
		}
		h.mu.Unlock()
	}
	return nil
}

// updated is a server's notifications/resources/updated: its URI's
// listeners are due to hear of it.
func (h *resourceHub) updated(snap *registry.FeatureSnapshot, layer registry.LayerID, uri string) {
	served := snap.Served(layer, uri)
	h.mu.Lock()
	_, listened := h.listeners[served]
	if listened {
		h.due[served] = struct{}{}
	}
	h.mu.Unlock()
	if listened {
		select {
		case h.wake <- struct{}{}:
		default: // the dispatcher is already due to look
		}
	}
}

// dispatch tells the due URIs' listeners, a round at most every
// updateInterval, until close.
func (h *resourceHub) dispatch() {
	defer close(h.done)
	pace := time.NewTimer(0)
	defer pace.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-pace.C:
		}
		select {
		case <-h.stop:
			return
		case <-h.wake:
		}
		pace.Reset(updateInterval)
		h.mu.Lock()
		var calls []*listener
		for uri := range h.due {
			for l := range h.listeners[uri] {
				calls = append(calls, l)
			}
		}
		clear(h.due)
		h.mu.Unlock()
		for _, l := range calls {
			l.notify(l.served)
		}
	}
}

// resourceUpdated is the engine's hook for a server's notification.
func (c *Core) resourceUpdated(layer registry.LayerID, uri string) {
	c.hub.updated(c.features.Snapshot(), layer, uri)
}
