package engine

import (
	"context"
	"sync"

	"github.com/toolnexus/toolnexus/internal/waitctx"
)

// startingNote is the status of a source whose first start still runs
// behind the listeners (Options.StartInBackground).
const startingNote = "starting: not connected yet (the first start runs in the background, bounded by the source's own timeout)"

// startAll starts the instances of toStart at once and waits for them —
// except, on the first Apply with StartInBackground, for the sources that
// reach out to an upstream (those with restart settings: MCP, http, A2A),
// which are returned marked starting, their Start's outcome to come on
// behind[i]. Local sources (builtins, skills, native, debug) are always
// waited for: they start in milliseconds and their tools are the floor of
// what a fresh server serves.
func (e *Engine) startAll(toStart []planned) (started []*instance, behind []chan error) {
	background := e.opts.StartInBackground && !e.applied
	e.applied = true
	started = make([]*instance, len(toStart))
	behind = make([]chan error, len(toStart))
	var wg sync.WaitGroup
	for i, p := range toStart {
		inst := &instance{src: p.build(), pub: e.newPublisher(), fingerprint: p.fingerprint, unconfigured: p.unconfigured}
		started[i] = inst
		if background && p.restart != nil {
			inst.starting = true
			behind[i] = make(chan error, 1) // never blocks the Start's goroutine
			e.starting.Add(1)
			e.closing.Add(1) // Close waits for this Start, which its Close of the source ends
			go func() {
				defer e.closing.Done()
				behind[i] <- inst.src.Start(e.ctx, inst.pub)
			}()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			inst.startErr = inst.src.Start(e.ctx, inst.pub)
		}()
	}
	wg.Wait()
	return started, behind
}

// finishBehind waits, in the background, for the first Start of inst (the
// current instance of p, marked starting) and then treats its outcome as
// Apply does: a failure is logged once and retried. A reload or Close that
// replaces inst meanwhile ends the wait (stopRetry) and closes the source,
// which ends its Start. Called with e.mu held.
func (e *Engine) finishBehind(p planned, inst *instance, result <-chan error) {
	ctx, cancel := context.WithCancel(e.ctx)
	inst.stopRetry = cancel
	e.retries.Add(1)
	go func() {
		defer e.retries.Done()
		defer e.starting.Done()
		defer cancel()
		var err error
		select {
		case err = <-result:
		case <-ctx.Done():
			return
		}
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.closed || ctx.Err() != nil || e.instances[p.id] != inst {
			return // overtaken: whoever replaced inst retires and closes it
		}
		next := &instance{src: inst.src, pub: inst.pub, fingerprint: inst.fingerprint, startErr: err, unconfigured: inst.unconfigured}
		e.instances[p.id] = next
		if err != nil {
			_ = e.reg.Replace(p.id, nil) // a replaced instance's tools must not outlive it
			e.dropFeatures(p.id)
		}
		if next.failed() {
			e.logFailure(p, next)
			e.scheduleRetry(p, next)
		}
	}()
}

// WaitStarted waits until every first start left running behind the first
// Apply (StartInBackground) has connected or failed, or ctx ends.
func (e *Engine) WaitStarted(ctx context.Context) error { return waitctx.Group(ctx, &e.starting) }
