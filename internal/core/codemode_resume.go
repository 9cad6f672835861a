package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/toolnexus/toolnexus/internal/approval"
	"github.com/toolnexus/toolnexus/internal/codemode"
	"github.com/toolnexus/toolnexus/internal/suspend"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// A run_code script whose inner call needs an answer (an approval, a
// question, an upstream's request) is suspended: the caller gets that
// call's PENDING, and resuming run_code with the answer re-runs the script,
// replaying the inner results it had already obtained (in order) and
// passing the answer to the call that suspended. Scripts are assumed
// deterministic; one that makes a different call on the re-run is stopped.
//
// A suspended run is an entry of the one store of suspended calls (kind
// suspend.KindRun), bound to the run_code call itself (principal, session,
// tool, canonical arguments — so the code), with the replay record as its
// data: it is capped per principal and for all like every suspended kind,
// expires with the request it waits on, and is resumed on any replica
// sharing the store. The caller names it by its inner call's id, so it is
// found by its binding (Store.Lookup) and must name that inner call.

// maxSuspendedRuns caps the suspended runs of all principals; each
// principal's are capped by limits.maxPending. suspendedTTL bounds a run
// whose inner request does not say when it expires.
const (
	maxSuspendedRuns = 1000
	suspendedTTL     = time.Hour
)

// runRecord is a suspended run as the store keeps it.
type runRecord struct {
	// Pending is the inner call's PENDING, what the caller answers.
	Pending tool.Pending `json:"pending"`
	// Calls are the inner calls made before it (innerKey), in order, and
	// Results what each returned.
	Calls   []string               `json:"calls"`
	Results []codemode.InnerResult `json:"results"`
}

// innerKey is an inner call as the replay compares it: the tool and the
// canonical digest of its arguments (the one binding of every suspended
// kind), so a re-run that builds the same object in another key order
// makes the same call.
func innerKey(name string, args json.RawMessage) string {
	d, _ := suspend.Digest(args) // a script's arguments are always one JSON object
	return name + ":" + d
}

// resumeRun prepares a run_code call's replayer. A call without an answer
// whose script is already suspended gets that run's PENDING again, with
// nothing re-run (an inner call must never run twice). A call with an
// answer takes the suspended run it resumes — unless the approval it waits
// on is still undecided, which leaves the run as it is. refused ends the
// call instead.
func (c *Core) resumeRun(ctx context.Context, outer Call) (rp *replayer, refused *tool.Result) {
	fail := func(outcome tool.Outcome, msg string) (*replayer, *tool.Result) {
		r := tool.FailureWith(outcome, msg)
		return nil, &r
	}
	b, err := suspend.Bind(principalName(outer), outer.Session, outer.Name, outer.Arguments)
	if err != nil {
		return fail(tool.OutcomeInvalidArguments, codemode.ToolName+": "+err.Error())
	}
	rp = &replayer{c: c, outer: outer, bind: b}
	held, rec, err := c.suspendedRun(ctx, b)
	if err != nil {
		return fail(tool.OutcomeToolError, codemode.ToolName+": the suspended scripts cannot be read: "+err.Error())
	}
	if outer.Answer == nil {
		if rec != nil {
			r := tool.Suspend(rec.Pending)
			return nil, &r
		}
		return rp, nil
	}
	if rec == nil || rec.Pending.ID != outer.Answer.ID {
		return fail(tool.OutcomeInvalidArguments, fmt.Sprintf("answer %s resumes no suspended %s of this caller with this code", outer.Answer.ID, codemode.ToolName))
	}
	if outer.Answer.OK && rec.Pending.Kind == PendingKindApproval {
		if a, ok := c.pol.approvals.Get(ctx, outer.Answer.ID); ok && a.Status == approval.Pending {
			return fail(tool.OutcomeToolError, fmt.Sprintf("%s: approval %s: %v; the script stays suspended, and nothing it did ran again", codemode.ToolName, outer.Answer.ID, approval.ErrNotYet))
		}
	}
	// One resume takes the run: a second, at the same time or later, finds
	// it answered.
	if _, err := c.pol.suspended.Resolve(ctx, held.ID, suspend.Resolution{To: suspend.Answered, By: b.Principal, Require: &b}); err != nil {
		if errors.Is(err, suspend.ErrAlreadyAnswered) || errors.Is(err, suspend.ErrExpired) || errors.Is(err, suspend.ErrUnknown) {
			return fail(tool.OutcomeInvalidArguments, fmt.Sprintf("answer %s resumes no suspended %s of this caller with this code (it was resumed already, or expired)", outer.Answer.ID, codemode.ToolName))
		}
		return fail(tool.OutcomeToolError, codemode.ToolName+": the suspended script cannot be resumed: "+err.Error())
	}
	rp.prior, rp.answer = rec, outer.Answer
	return rp, nil
}

// suspendedRun is the open suspended run bound to b and its record; none
// (nil record, no error) when there is none.
func (c *Core) suspendedRun(ctx context.Context, b suspend.Binding) (suspend.Entry, *runRecord, error) {
	held, err := c.pol.suspended.Lookup(ctx, suspend.KindRun, b)
	if errors.Is(err, suspend.ErrUnknown) {
		return suspend.Entry{}, nil, nil
	}
	if err != nil {
		return suspend.Entry{}, nil, err
	}
	var rec runRecord
	if err := json.Unmarshal(held.Data, &rec); err != nil {
		return suspend.Entry{}, nil, fmt.Errorf("the record of %s is unreadable: %w", held.ID, err)
	}
	return held, &rec, nil
}

// suspendRun keeps the run rp suspended on its inner call's PENDING, and
// returns that PENDING; past the caps (limits.maxPending runs per
// principal, maxSuspendedRuns for all) the run fails instead, saying so.
func (c *Core) suspendRun(ctx context.Context, rp *replayer, meta map[string]any) tool.Result {
	rec, err := json.Marshal(runRecord{Pending: *rp.pending, Calls: rp.keys, Results: rp.results})
	if err != nil {
		return tool.Failure(codemode.ToolName+": an inner call waits for an answer, but the script's record cannot be kept: "+err.Error(), meta)
	}
	ttl := suspendedTTL
	if at := rp.pending.ExpiresAt; !at.IsZero() {
		ttl = max(time.Until(at), time.Second)
	}
	_, err = c.pol.suspended.Create(ctx, suspend.Request{Kind: suspend.KindRun, Binding: rp.bind, TTL: ttl,
		MaxPerPrincipal: c.cfg.Load().Pending.MaxPerPrincipal, MaxTotal: maxSuspendedRuns, Data: rec})
	if errors.Is(err, suspend.ErrCapped) {
		return tool.Failure(fmt.Sprintf("%s: an inner call waits for an answer, but the script cannot wait: %v (limits.maxPending per caller, %d for all); resume or let some suspended scripts expire first",
			codemode.ToolName, err, maxSuspendedRuns), meta)
	}
	if err != nil {
		return tool.Failure(codemode.ToolName+": an inner call waits for an answer, but the script cannot wait: "+err.Error(), meta)
	}
	// The inner call's own PENDING: answer it (an approval: once an
	// approver decided), then resume run_code (same code) with the answer.
	return tool.Suspend(*rp.pending)
}

// replayer answers a script's inner calls: from a suspended run's record
// first, then the call that suspended with the caller's answer, then
// live; it records everything for a further suspension.
type replayer struct {
	c       *Core
	outer   Call
	bind    suspend.Binding // the run_code call's
	prior   *runRecord
	answer  *tool.Answer
	keys    []string
	results []codemode.InnerResult
	pending *tool.Pending
}

func (p *replayer) call(ctx context.Context, name string, args json.RawMessage) codemode.InnerResult {
	key := innerKey(name, args)
	i := len(p.keys)
	if p.prior != nil && i < len(p.prior.Calls) {
		if p.prior.Calls[i] != key {
			return codemode.InnerResult{Fatal: fmt.Sprintf("run_code: resumed, the script made a different call #%d (%s) than the run that was suspended: scripts must be deterministic", i+1, name)}
		}
		p.keys, p.results = append(p.keys, key), append(p.results, p.prior.Results[i])
		return p.prior.Results[i]
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
