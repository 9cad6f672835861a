package pending

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Hub is the Remote of replicas in one process — several engines over
// one shared suspend.Store, as tests and programs embedding toolnexus run
// them: a forwarded answer is a call to the serve function of the replica
// that joined under the owner's name, on a goroutine that replica owns.
// It keeps the same contract as the Redis one (pendingtest.RunForwarding).
type Hub struct {
	mu     sync.Mutex
	joined map[string]*HubReplica
}

// NewHub makes an empty hub.
func NewHub() *Hub { return &Hub{joined: map[string]*HubReplica{}} }

// Join is the Remote of one replica named id. Close it to leave.
func (h *Hub) Join(id string) *HubReplica {
	ctx, cancel := context.WithCancel(context.Background())
	return &HubReplica{hub: h, id: id, ctx: ctx, cancel: cancel}
}

// HubReplica is one replica's Remote on a Hub.
type HubReplica struct {
	hub    *Hub
	id     string
	ctx    context.Context // ends when the replica leaves
	cancel context.CancelFunc
	serve  func(context.Context, []byte) []byte
	wg     sync.WaitGroup
}

var _ Remote = (*HubReplica)(nil)

// errHubLeft: the replica left the hub before it served.
var errHubLeft = errors.New("pending: this replica has left the hub")

// Replica implements Remote.
func (r *HubReplica) Replica() string { return r.id }

// ServeForwards implements Remote: from now on r answers what other
// replicas of the hub forward to it.
func (r *HubReplica) ServeForwards(serve func(ctx context.Context, req []byte) []byte) error {
	r.hub.mu.Lock()
	defer r.hub.mu.Unlock()
	if r.ctx.Err() != nil {
		return errHubLeft
	}
	r.serve = serve
	r.hub.joined[r.id] = r
	return nil
}

// Forward implements Remote.
func (r *HubReplica) Forward(ctx context.Context, owner string, req []byte) ([]byte, error) {
	r.hub.mu.Lock()
	o, ok := r.hub.joined[owner]
	if ok {
		o.wg.Add(1) // under the hub's lock: Close cannot be waiting yet
	}
	r.hub.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("%w: replica %q does not listen", ErrOwnerGone, owner)
	}
	reply := make(chan []byte, 1)
	go func() {
		defer o.wg.Done()
		reply <- o.serve(o.ctx, req)
	}()
	select {
	case b := <-reply:
		return b, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-o.ctx.Done():
		// A leaving replica ends what it serves, which still replies;
		// one that cannot is gone.
		select {
		case b := <-reply:
			return b, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Close leaves the hub: forwards to r fail with ErrOwnerGone from now on,
// the ones it serves see their ctx end, and Close returns once they have.
func (r *HubReplica) Close() {
	r.hub.mu.Lock()
	if r.hub.joined[r.id] == r {
		delete(r.hub.joined, r.id)
	}
	r.cancel()
	r.hub.mu.Unlock()
	r.wg.Wait()
}
