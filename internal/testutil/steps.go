package testutil

import (
	"slices"
	"sync"
)

// StepLog records the steps of the core's pipeline each call entered
// (core.Options.OnStep), by tool name. A call begins at the pipeline's
// first step, so the calls to one name stay apart, and a call made inside
// another (run_code's inner calls) is recorded under its own name.
type StepLog struct {
	first string
	mu    sync.Mutex
	calls map[string][][]string
}

// NewStepLog makes a log whose calls begin at the step named first
// (core.StepObserve).
func NewStepLog(first string) *StepLog {
	return &StepLog{first: first, calls: map[string][][]string{}}
}

// Hear records that a call to name entered step.
func (l *StepLog) Hear(name, step string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	calls := l.calls[name]
	if step == l.first || len(calls) == 0 {
		calls = append(calls, nil)
	}
	calls[len(calls)-1] = append(calls[len(calls)-1], step)
	l.calls[name] = calls
}

// Calls are the steps of every call to name so far, one list per call.
func (l *StepLog) Calls(name string) [][]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([][]string, len(l.calls[name]))
	for i, c := range l.calls[name] {
		out[i] = slices.Clone(c)
	}
	return out
}

// Reset forgets every call.
func (l *StepLog) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	clear(l.calls)
}
