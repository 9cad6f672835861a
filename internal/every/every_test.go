package every_test

import (
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolnexus/toolnexus/internal/every"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// f runs again and again until stop, and never once stop has returned:
// what it touches may be torn down right after.
func TestStartRunsUntilStop(t *testing.T) {
	var calls atomic.Int64
	ran := make(chan struct{}, 1)
	stop := every.Start(time.Millisecond, func() {
		calls.Add(1)
		select {
		case ran <- struct{}{}:
		default:
		}
	})
	for range 3 { // three ticks at least, waited for by calls, not sleeps
		<-ran
	}
	stop()
	after := calls.Load()
	if after < 3 {
		t.Fatalf("%d calls before stop; want 3 or more", after)
	}
	time.Sleep(10 * time.Millisecond) // ten more periods, were it still ticking
	if got := calls.Load(); got != after {
		t.Errorf("%d calls after stop returned", got-after)
	}
}
