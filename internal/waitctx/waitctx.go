// Package waitctx waits for a sync.WaitGroup until a context ends: a Close
// bounded by its context.
package waitctx

import (
	"context"
	"sync"
)

// Group waits for wg until ctx ends, for a Close bounded by its
// context: nil once wg is done, else ctx's error (the waiting goroutine
// then returns when wg is done, so it never outlives what it waits for).
func Group(ctx context.Context, wg *sync.WaitGroup) error {
	if ctx.Done() == nil {
		wg.Wait()
		return nil
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
