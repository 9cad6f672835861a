package grpcapi

import (
	"context"
	"fmt"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/toolnexus/toolnexus/internal/auth"
)

// watchCounter counts the open WatchTools streams per principal, so one
// token cannot hold thousands of streams (each a goroutine, a watcher and
// a copy of the tool list in flight) and starve the server.
type watchCounter struct {
	mu sync.Mutex
	n  map[string]int
}

// enterWatch takes a slot for the caller, or refuses with
// RESOURCE_EXHAUSTED naming the cap and its key. release gives it back.
func (a *API) enterWatch(ctx context.Context) (release func(), err error) {
	key, who := "", "this server's callers (auth is off)"
	if p := auth.From(ctx); p != nil {
		key, who = "token:"+p.Name, fmt.Sprintf("token %q", p.Name)
	}
	max := a.core.Config().Server.Limits.WatchStreams
	w := &a.watches
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n == nil {
		w.n = map[string]int{}
	}
	if max > 0 && w.n[key] >= max {
		return nil, status.Errorf(codes.ResourceExhausted,
			"too many open WatchTools streams for %s: at most %d (server.limits.watchStreams); close one before opening another", who, max)
	}
	w.n[key]++
	return func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.n[key]--; w.n[key] <= 0 {
			delete(w.n, key)
		}
	}, nil
}
