package core

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/toolnexus/toolnexus/internal/codemode"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// A run_code script whose inner call needs an approval is suspended: the
// caller gets that call's PENDING, and resuming run_code with the answer
// re-runs the script, replaying the inner results it had already obtained
// (in order) and passing the answer to the call that suspended. Scripts
// are assumed deterministic; one that makes a different call on the
// re-run is stopped.

// maxSuspended caps the suspended runs held at once; suspendedTTL drops
// one never resumed.
const (
	maxSuspended = 1000
	suspendedTTL = time.Hour
)

type suspendedRun struct {
	principal, session string
	code               string
	keys               []string // name + arguments digest of each inner call, in order
	results            []codemode.InnerResult
	at                 time.Time
}

type suspendedRuns struct {
	mu   sync.Mutex
	runs map[string]*suspendedRun // by the pending inner call's approval id
}

func (s *suspendedRuns) put(id string, r *suspendedRun) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.runs == nil {
		s.runs = map[string]*suspendedRun{}
	}
	for k, v := range s.runs {
		if time.Since(v.at) > suspendedTTL {
			delete(s.runs, k)
		}
	}
	if len(s.runs) >= maxSuspended {
		return false
	}
	s.runs[id] = r
	return true
}

// take removes and returns the run suspended under id if it belongs to
// this principal, session and code; a mismatch leaves it for its owner.
func (s *suspendedRuns) take(id, principal, session, code string) *suspendedRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.runs[id]
	if r == nil || r.principal != principal || r.session != session || r.code != code {
		return nil
	}
	delete(s.runs, id)
	return r
}

func callKey(name string, args json.RawMessage) string {
	h := sha256.Sum256(args)
	return name + "\x00" + string(h[:])
}

// replayer answers a script's inner calls: from a suspended run's record
// first, then the call that suspended with the caller's answer, then
// live; it records everything for a further suspension.
type replayer struct {
	c       *Core
	outer   Call
	prior   *suspendedRun
	answer  *tool.Answer
	keys    []string
	results []codemode.InnerResult
	pending *tool.Pending
}

func (p *replayer) call(ctx context.Context, name string, args json.RawMessage) codemode.InnerResult {
	key := callKey(name, args)
	i := len(p.keys)
	if p.prior != nil && i < len(p.prior.keys) {
		if p.prior.keys[i] != key {
			return codemode.InnerResult{Fatal: fmt.Sprintf("run_code: resumed, the script made a different call #%d (%s) than the run that was suspended: scripts must be deterministic", i+1, name)}
		}
		p.keys, p.results = append(p.keys, key), append(p.results, p.prior.results[i])
		return p.prior.results[i]
	}
	var answer *tool.Answer
	if p.answer != nil {
		answer, p.answer = p.answer, nil
	}
	r, res := p.c.innerCallWith(ctx, p.outer, name, args, answer)
	if res.Resolved() == tool.OutcomePending && res.Pending != nil {
		p.pending = res.Pending
		return codemode.InnerResult{Fatal: "run_code: suspended: " + name + " waits for an answer"}
	}
	p.keys, p.results = append(p.keys, key), append(p.results, r)
	return r
}
