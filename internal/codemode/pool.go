package codemode

import (
	"context"
	"fmt"
	"sync"
)

// Pool bounds the interpreters running at once, in total and per principal
// (Limits.MaxConcurrent, Limits.MaxPerPrincipal): each is a process with up
// to codeMode.memoryMB of address space, and one token running thirty at
// once would take the machine's memory from every other caller. A run
// past a cap waits for a free interpreter until its context ends. The zero
// Pool is ready; the caps are read per run, so a reload changes them for
// the next one.
type Pool struct {
	mu      sync.Mutex
	running int
	per     map[string]int
	freed   chan struct{} // closed when an interpreter ends, then replaced
}

// Run runs script as Run does once the caps leave room for principal.
func (p *Pool) Run(ctx context.Context, principal, script string, lim Limits, call Caller) Result {
	if err := p.acquire(ctx, principal, lim); err != nil {
		return Result{Error: err.Error()}
	}
	defer p.release(principal)
	return Run(ctx, script, lim, call)
}

func (p *Pool) acquire(ctx context.Context, principal string, lim Limits) error {
	for {
		p.mu.Lock()
		full := lim.MaxConcurrent > 0 && p.running >= lim.MaxConcurrent
		mine := lim.MaxPerPrincipal > 0 && p.per[principal] >= lim.MaxPerPrincipal
		if !full && !mine {
			p.running++
			if p.per == nil {
				p.per = map[string]int{}
			}
			p.per[principal]++
			p.mu.Unlock()
			return nil
		}
		if p.freed == nil {
			p.freed = make(chan struct{})
		}
		freed := p.freed
		p.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			if mine {
				return fmt.Errorf("run_code: not started: this caller's %d interpreters (codeMode.maxConcurrencyPerPrincipal) stayed busy until the call's deadline; retry later", lim.MaxPerPrincipal)
			}
			return fmt.Errorf("run_code: not started: all %d interpreters (codeMode.maxConcurrency) stayed busy until the call's deadline; retry later", lim.MaxConcurrent)
		}
	}
}

func (p *Pool) release(principal string) {
	p.mu.Lock()
	p.running--
	if p.per[principal]--; p.per[principal] <= 0 {
		delete(p.per, principal)
	}
	if p.freed != nil {
		close(p.freed)
		p.freed = nil
	}
	p.mu.Unlock()
}
