package executor

import "sync"

// principalSems is one tool's per-principal concurrency cap
// (limits.tools.NAME.maxConcurrencyPerPrincipal): a semaphore per caller,
// made on the caller's first call and kept, so one token flooding a slow
// tool waits on its own slots and never takes another's. The lookup is a
// sync.Map load: no lock and no allocation once the caller has called.
type principalSems struct {
	n    int
	sems sync.Map // principal name → chan struct{}
}

func (p *principalSems) of(principal string) chan struct{} {
	if v, ok := p.sems.Load(principal); ok {
		return v.(chan struct{})
	}
	v, _ := p.sems.LoadOrStore(principal, make(chan struct{}, p.n))
	return v.(chan struct{})
}
