package engine

import (
	"context"
	"time"

	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/mcp"
)

// A source that fails to start (an MCP server not up yet, an OpenAPI spec
// or an A2A agent card that cannot be fetched) is started again in the
// background, the wait doubling from initial up to max, until it starts or
// a reload replaces it or the engine closes. Pods that start together
// thus converge without a restart or a reload; a reload retries at once.

// defaultRestart is the backoff of sources without restart settings of
// their own (http, a2a): the MCP defaults.
var defaultRestart = mcp.Restart{}

// failed says whether the instance's start failed, wholly (an error) or in
// part (an http source with one spec of two loaded reports Failed).
func (inst *instance) failed() bool {
	return inst.startErr != nil || inst.src.Status().State == sources.Failed
}

// scheduleRetry starts the retry loop of inst, the current failed instance
// of p.id. Called with e.mu held.
func (e *Engine) scheduleRetry(p planned, inst *instance) {
	ctx, cancel := context.WithCancel(e.ctx)
	inst.stopRetry = cancel
	e.retries.Add(1)
	go func() {
		defer e.retries.Done()
		defer cancel()
		e.retryLoop(ctx, p, inst)
	}()
}

// stopRetrying ends inst's retry loop and keeps an attempt in progress from
// publishing. Called with e.mu held, before inst is replaced or removed.
func (inst *instance) stopRetrying() {
	if inst.stopRetry != nil {
		inst.stopRetry()
	}
	if inst.attempt != nil {
		inst.attempt.retire()
	}
}

func (e *Engine) retryLoop(ctx context.Context, p planned, cur *instance) {
	initial, maxWait := p.restart.StartBackoff()
	wait := initial
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for attempt := 1; ; attempt++ {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		next, ok := e.attemptStart(ctx, p, cur)
		if !ok || !next.failed() {
			return
		}
		e.log.Debug("source still failing; retrying", "source", p.id.String(), "attempt", attempt, "next_in", wait)
		cur = next
		wait = min(wait*2, maxWait)
		timer.Reset(wait)
	}
}

// attemptStart starts a fresh instance of p and, unless a reload or Close
// overtook it meanwhile, swaps it in for cur. It returns the instance now
// current and false when the loop must end (overtaken, or closing).
func (e *Engine) attemptStart(ctx context.Context, p planned, cur *instance) (*instance, bool) {
	src := p.build()
	pub := e.newPublisher()
	pub.staging = true // published only if kept, below
	e.mu.Lock()
	if e.closed || ctx.Err() != nil || e.instances[p.id] != cur {
		e.mu.Unlock()
		return nil, false
	}
	cur.attempt = pub
	e.mu.Unlock()

	err := src.Start(ctx, pub)

	e.mu.Lock()
	if e.closed || ctx.Err() != nil || e.instances[p.id] != cur {
		// Overtaken: the reload or Close retired pub already.
		pub.retire()
		e.mu.Unlock()
		closeQuietly(e.log, p.id, src)
		return nil, false
	}
	next := &instance{src: src, pub: pub, fingerprint: p.fingerprint, startErr: err, stopRetry: cur.stopRetry, unconfigured: cur.unconfigured}
	cur.attempt = nil
	if cur.startErr == nil && next.failed() && pub.stagedCount() <= e.reg.Snapshot().LayerCount(p.id) {
		// Still partly failed and no better (an http source whose one
		// spec of two is still down): keep the instance that serves, so
		// watchers and MCP clients see no change every retry.
		pub.retire()
		e.mu.Unlock()
		closeQuietly(e.log, p.id, src)
		return cur, true
	}
	defer e.mu.Unlock()
	cur.stopRetry = nil
	if err := pub.commit(); err != nil {
		e.log.Warn("publishing a restarted source", "source", p.id.String(), "error", err)
	}
	if !next.failed() {
		e.log.Info("source started after failing", "source", p.id.String())
	}
	e.instances[p.id] = next
	e.release(p.id, cur)
	return next, true
}

// logFailure logs a failed start once, here: the sources themselves log
// the details at debug, so one failure is one warning.
func (e *Engine) logFailure(p planned, inst *instance) {
	reason := inst.src.Status().Error
	if inst.startErr != nil {
		reason = inst.startErr.Error()
	}
	if p.restart == nil {
		e.log.Warn("source failed to start", "source", p.id.String(), "error", reason)
		return
	}
	initial, _ := p.restart.StartBackoff()
	e.log.Warn("source failed to start; retrying in the background", "source", p.id.String(), "error", reason, "first_retry_in", initial)
}
