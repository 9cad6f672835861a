package executor

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

type ctxKey struct{}

// A call context that nothing asks for Done stays unarmed, answers values
// from its parent and reports the deadline from the clock.
func TestCallContextUnarmed(t *testing.T) {
	parent := context.WithValue(context.Background(), ctxKey{}, "v")
	c := newCallContext(parent, time.Hour)
	if c.Err() != nil || c.Value(ctxKey{}) != "v" {
		t.Fatalf("Err %v, Value %v", c.Err(), c.Value(ctxKey{}))
	}
	if dl, ok := c.Deadline(); !ok || time.Until(dl) < 59*time.Minute {
		t.Fatalf("Deadline %v %v", dl, ok)
	}
	if c.inner.Load() != nil {
		t.Fatal("armed without Done")
	}
	c.release()
	if !errors.Is(c.Err(), context.Canceled) {
		t.Fatalf("after release: %v, want Canceled", c.Err())
	}
	select {
	case <-c.Done():
	default:
		t.Fatal("Done open after release")
	}
	if c.inner.Load() != nil {
		t.Fatal("release armed it")
	}
}

// Past the deadline, unarmed: Err, Done and context.Cause all say
// DeadlineExceeded.
func TestCallContextPastDeadline(t *testing.T) {
	c := newCallContext(context.Background(), time.Nanosecond)
	for !time.Now().After(c.deadline) {
	}
	if !errors.Is(c.Err(), context.DeadlineExceeded) {
		t.Fatalf("Err %v", c.Err())
	}
	if !errors.Is(context.Cause(c), context.DeadlineExceeded) {
		t.Fatalf("Cause %v", context.Cause(c))
	}
	<-c.Done()
	c.release()
}

// Done arms the real deadline: a tool waiting on it is released at the
// deadline; contexts derived from it (by WithCancel, AfterFunc) end with it
// and, when the call returns first, with the release.
func TestCallContextArmed(t *testing.T) {
	parent, cancelParent := context.WithCancel(context.Background())
	defer cancelParent()
	c := newCallContext(parent, 20*time.Millisecond)
	<-c.Done()
	if !errors.Is(c.Err(), context.DeadlineExceeded) {
		t.Fatalf("Err %v", c.Err())
	}
	c.release()

	c = newCallContext(parent, time.Hour)
	child, cancelChild := context.WithCancel(c)
	defer cancelChild()
	fired := make(chan struct{})
	context.AfterFunc(c, func() { close(fired) })
	c.release()
	<-child.Done()
	<-fired
	if !errors.Is(child.Err(), context.Canceled) {
		t.Fatalf("child after release: %v", child.Err())
	}

	// The parent's cancellation reaches the call and what it derived.
	c = newCallContext(parent, time.Hour)
	child2, cancel2 := context.WithCancel(c)
	defer cancel2()
	cancelParent()
	<-child2.Done()
	if !errors.Is(c.Err(), context.Canceled) {
		t.Fatalf("after the parent's cancel: %v", c.Err())
	}
	c.release()
}

// Many goroutines asking for Done at once, and the call ending meanwhile,
// arm one context and leave none running.
func TestCallContextConcurrentArm(t *testing.T) {
	for range 100 {
		c := newCallContext(context.Background(), time.Hour)
		var wg sync.WaitGroup
		dones := make([]<-chan struct{}, 8)
		for i := range dones {
			wg.Add(1)
			go func() { defer wg.Done(); dones[i] = c.Done() }()
		}
		c.release()
		wg.Wait()
		for _, d := range dones {
			<-d // every Done closes: the release reached whatever was armed
		}
	}
}
