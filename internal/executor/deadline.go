package executor

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

// TimeoutError is the cause (context.Cause) of a call's context that
// limits.timeout ended, so a tool reporting its context's end
// (tool.ContextResult) names the limit: "debug_sleep: timed out after
// 20ms (limits.timeout)". It is a deadline: errors.Is(err,
// context.DeadlineExceeded) holds.
type TimeoutError struct{ Limit time.Duration }

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("timed out after %dms (limits.timeout)", e.Limit.Milliseconds())
}

// Is makes the limit a deadline for errors.Is.
func (e *TimeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

// callContext is the context a call runs under when limits.timeout ends it
// before the caller's own deadline would. It behaves as
// context.WithDeadline(parent, deadline), but the timer, the cancel context
// and its registration with the parent are only made once someone asks for
// Done (the tool selects on it, derives a context, registers AfterFunc).
// Most tools that finish quickly never do, and their calls skip ~6
// allocations, a timer insert and delete, and a lock on the parent
// context's children.
//
// Err and Deadline answer from the clock until then, so a tool that checks
// ctx.Err() still sees DeadlineExceeded at the deadline. When the call ends
// (release), the context reports Canceled and its Done is closed, as a
// cancelled context.WithDeadline would, for any goroutine the tool left
// behind.
type callContext struct {
	parent   context.Context
	deadline time.Time
	// limit is the context's cause at its deadline, kept here so that
	// arming it allocates nothing more.
	limit    TimeoutError
	inner    atomic.Pointer[armedContext]
	released atomic.Bool
}

type armedContext struct {
	ctx    context.Context
	cancel context.CancelFunc
}

var closedDone = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

func newCallContext(parent context.Context, timeout time.Duration) *callContext {
	return &callContext{parent: parent, deadline: time.Now().Add(timeout), limit: TimeoutError{Limit: timeout}}
}

// cause is why the context ends at its deadline: limits.timeout.
func (c *callContext) cause() error { return &c.limit }

// arm makes the real deadline context, once.
func (c *callContext) arm() context.Context {
	if a := c.inner.Load(); a != nil {
		return a.ctx
	}
	ctx, cancel := context.WithDeadlineCause(c.parent, c.deadline, c.cause())
	a := &armedContext{ctx: ctx, cancel: cancel}
	if !c.inner.CompareAndSwap(nil, a) {
		cancel()
		return c.inner.Load().ctx
	}
	if c.released.Load() {
		// The call ended while this was being made: no one waits on it.
		cancel()
	}
	return ctx
}

// release ends the context when the call returns.
func (c *callContext) release() {
	c.released.Store(true)
	if a := c.inner.Load(); a != nil {
		a.cancel()
	}
}

func (c *callContext) Deadline() (time.Time, bool) { return c.deadline, true }

func (c *callContext) Done() <-chan struct{} {
	if a := c.inner.Load(); a != nil {
		return a.ctx.Done()
	}
	if c.released.Load() {
		return closedDone
	}
	return c.arm().Done()
}

func (c *callContext) Err() error {
	if a := c.inner.Load(); a != nil {
		return a.ctx.Err()
	}
	if err := c.parent.Err(); err != nil {
		return err
	}
	if c.released.Load() {
		return context.Canceled
	}
	if !time.Now().Before(c.deadline) {
		return context.DeadlineExceeded
	}
	return nil
}

func (c *callContext) Value(key any) any {
	if a := c.inner.Load(); a != nil {
		return a.ctx.Value(key)
	}
	if !c.released.Load() && !time.Now().Before(c.deadline) {
		// Past the deadline: arm, so context.Cause (which asks Value for
		// the cancel context) reports DeadlineExceeded.
		return c.arm().Value(key)
	}
	return c.parent.Value(key)
}

func (c *callContext) String() string { return "executor.callContext" }
