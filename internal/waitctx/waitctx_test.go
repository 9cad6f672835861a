package waitctx_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/toolnexus/toolnexus/internal/waitctx"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestGroupReturnsWhenTheGroupIsDone(t *testing.T) {
	var wg sync.WaitGroup
	wg.Add(1)
	release := make(chan struct{})
	go func() { <-release; wg.Done() }()
	close(release)
	if err := waitctx.Group(context.Background(), &wg); err != nil {
		t.Fatal(err)
	}
}

// A context that ends first cuts the wait short with its error, and the
// waiting goroutine still ends once the group does (goleak checks).
func TestGroupStopsWaitingWhenTheContextEnds(t *testing.T) {
	var wg sync.WaitGroup
	wg.Add(1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := waitctx.Group(ctx, &wg); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	wg.Done()
}
