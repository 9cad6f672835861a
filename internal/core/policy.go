package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolnexus/toolnexus/internal/approval"
	"github.com/toolnexus/toolnexus/internal/audit"
	"github.com/toolnexus/toolnexus/internal/auth"
	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/metrics"
	"github.com/toolnexus/toolnexus/internal/policy"
	"github.com/toolnexus/toolnexus/internal/ratelimit"
	"github.com/toolnexus/toolnexus/internal/suspend"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// PendingKindApproval is PendingRequest.kind of a call waiting for a human.
const PendingKindApproval = "approval"

// approvalHeartbeat is how often a waiting streamed call tells its caller
// it is still waiting, so proxies and clients do not take it for dead.
const approvalHeartbeat = 15 * time.Second

// ErrNotApprover refuses an approval decision by someone who may not make it.
var ErrNotApprover = errors.New("only admins and the principals or groups in policy.approvers may list or decide approvals")

// policyState is one config's policies: swapped whole on reload.
type policyState struct {
	set       *policy.Set
	shadow    bool
	approvers []string
}

// policyParts are the core's policy metrics and approvals.
type policyParts struct {
	metrics *metrics.Policy
	// suspended holds every suspended call: the approvals, and the
	// sources' elicitation, sampling and input requests (shared with the
	// engine), so the gate can tell an answer that is not its own.
	suspended suspend.Store
	approvals *approval.Store
}

func (c *Core) initPolicy(cfg *config.Config, reg prometheus.Registerer, sources []string, suspended suspend.Store) {
	c.pol.metrics = metrics.NewPolicy(reg, sources)
	c.pol.suspended = suspended
	c.pol.approvals = approval.New(suspended, approvalLimits(cfg))
	registerApprovalsPending(reg, func() *approval.Store { return c.pol.approvals })
	c.applyPolicy(cfg)
}

func approvalLimits(cfg *config.Config) approval.Limits {
	return approval.Limits{MaxPerPrincipal: cfg.Policy.MaxPending, MaxTotal: cfg.Policy.MaxPendingTotal, Timeout: cfg.Policy.ApprovalTimeout}
}

// applyPolicy swaps in cfg's policies and limits; calls in flight finish
// under the ones they started with.
func (c *Core) applyPolicy(cfg *config.Config) {
	if cfg.Policy.Enabled() {
		c.policy.Store(&policyState{set: cfg.Policy.Set, shadow: cfg.Policy.Mode == config.PolicyShadow, approvers: cfg.Policy.Approvers})
	} else {
		c.policy.Store(nil)
	}
	c.pol.approvals.SetLimits(approvalLimits(cfg))
	c.limiter.Store(ratelimit.New(cfg.RateLimits, ratelimit.WithCluster(c.cluster)))
}

func policyPrincipal(p *auth.Principal) string {
	if p == nil {
		return policy.Anonymous
	}
	return p.Name
}

// callGate is the policy step's check of one call (pipeline.go): made on
// the stack per call while policies are on.
type callGate struct {
	c    *Core
	ps   *policyState
	call Call
}

// Check is the policy step: the call runs, is refused, or waits for an
// approval.
func (g *callGate) Check(ctx context.Context, e *registry.Entry, args json.RawMessage, answer *tool.Answer) (*tool.Result, *tool.Answer) {
	in := policy.Input{Principal: policyPrincipal(g.call.Caller), Tool: e.Tool.Name, Source: e.Tool.Source, Annotations: e.Tool.Annotations,
		Arguments: args, Session: g.call.Session, Protocol: g.call.Protocol}
	if g.call.Caller != nil {
		in.Groups = g.call.Caller.Groups
	}
	v := g.ps.set.Decide(in)
	decisions := g.c.pol.metrics.For(e.Tool.Source)
	switch v.Effect {
	case policy.Allow:
		decisions[metrics.DecideAllow].Inc()
		return nil, answer
	case policy.Deny:
		if g.ps.shadow {
			decisions[metrics.DecideShadowDeny].Inc()
			g.c.log.InfoContext(ctx, "policy would deny (shadow mode)", "tool", e.Tool.Name, "principal", in.Principal, "policy", v.Policy, "reason", v.Denial())
			return nil, answer
		}
		decisions[metrics.DecideDeny].Inc()
		g.c.log.InfoContext(ctx, "policy denied a call", "tool", e.Tool.Name, "principal", in.Principal, "policy", v.Policy)
		return refuse(v.Denial()), nil
	}
	decisions[metrics.DecideApproval].Inc()
	if g.ps.shadow {
		g.c.log.InfoContext(ctx, "policy would ask for approval (shadow mode)", "tool", e.Tool.Name, "principal", in.Principal, "policy", v.Policy)
		return nil, answer
	}
	return g.approval(ctx, e, args, answer, in.Principal, v)
}

func refuse(text string) *tool.Result {
	r := tool.FailureWith(tool.OutcomeDenied, text)
	return &r
}

// approval runs the approval step of a call a policy wants approved: a
// caller resuming with an approval's id redeems it; a caller answering
// another request of this very call (the approved tool elicited) passes
// its answer on; otherwise a pending approval is made (or the identical
// call's reused), and the call either suspends (Execute) or waits for the
// decision (ExecuteStream, /mcp).
func (g *callGate) approval(ctx context.Context, e *registry.Entry, args json.RawMessage, answer *tool.Answer, who string, v policy.Verdict) (*tool.Result, *tool.Answer) {
	store := g.c.pol.approvals
	digest, err := suspend.Digest(args)
	if err != nil {
		return refuse("denied by policy: " + err.Error()), nil
	}
	bind := suspend.Binding{Principal: who, Session: g.call.Session, Tool: e.Tool.Name, Digest: digest}
	if answer != nil && !approval.Owns(answer.ID) && g.resumes(ctx, answer.ID, e.Tool.Name, digest) {
		return nil, answer // the call was approved before it suspended
	}
	if answer != nil {
		if !answer.OK {
			// Nothing is withdrawn: the approval stays as an approver sees
			// it, and the caller is told so.
			return refuse(fmt.Sprintf("approval %s: the answer says ok: false, so the call does not run; the approval itself is unchanged (it ends when used or when it expires)", answer.ID)), nil
		}
		if _, err := store.Redeem(ctx, answer.ID, bind); err != nil {
			return refuse(fmt.Sprintf("approval %s refused: %v", answer.ID, err)), nil
		}
		return nil, nil // approved: the tool runs, without the approval's answer
	}
	canon, _ := suspend.Canonical(args) // Digest already parsed args
	ent, err := store.Create(ctx, approval.Request{Binding: bind, Policy: v.Policy, Summary: summarize(canon), PolicyReason: v.Reason})
	if err != nil {
		return refuse(fmt.Sprintf("approval needed by policy %s, but %v", v.Policy, err)), nil
	}
	g.c.log.InfoContext(ctx, "call waits for approval", "approval", ent.ID, "tool", e.Tool.Name, "principal", who, "policy", v.Policy, "reused", ent.Reused)
	if !g.call.Stream && g.call.Protocol != ProtocolMCP {
		r := tool.Suspend(pendingOf(ent))
		return &r, nil
	}
	return g.wait(ctx, e, ent, bind)
}

// resumes reports whether id is an open request (an elicitation, sampling
// or input) that this exact call (owner, session, tool, arguments) is
// suspended on: such a call passed the gate before it ran and suspended.
func (g *callGate) resumes(ctx context.Context, id, toolName, digest string) bool {
	got, err := g.c.pol.suspended.Get(ctx, id)
	return err == nil && got.Kind != suspend.KindApproval && got.State == suspend.Pending &&
		got.Binding == suspend.Binding{Principal: principalName(g.call), Session: g.call.Session, Tool: toolName, Digest: digest}
}

// wait holds a streamed call until its approval is decided, telling the
// caller it waits (a log event, then progress every approvalHeartbeat).
func (g *callGate) wait(ctx context.Context, e *registry.Entry, ent approval.Entry, bind suspend.Binding) (*tool.Result, *tool.Answer) {
	store := g.c.pol.approvals
	msg := "waiting for approval " + ent.ID
	mcp := g.call.Protocol == ProtocolMCP
	if mcp {
		tool.Progress(ctx, 0, 0, msg)
	} else {
		tool.Log(ctx, tool.LevelInfo, "policy", msg)
	}
	for ent.Status == approval.Pending {
		wctx, cancel := context.WithTimeout(ctx, approvalHeartbeat)
		_, err := store.Wait(wctx, ent.ID)
		cancel()
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			r := tool.ContextResult(ctx, e.Tool.Name)
			return &r, nil
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			// Not a heartbeat: the approval is gone (trimmed, or the
			// store failed). Waiting on would spin until ctx ends.
			return refuse(fmt.Sprintf("approval %s refused: %v", ent.ID, err)), nil
		}
		if mcp {
			tool.Progress(ctx, 0, 0, msg)
		}
	}
	if _, err := store.Redeem(ctx, ent.ID, bind); err != nil {
		return refuse(fmt.Sprintf("approval %s refused: %v", ent.ID, err)), nil
	}
	return nil, nil
}

func pendingOf(e approval.Entry) tool.Pending {
	return tool.Pending{
		ID:   e.ID,
		Kind: PendingKindApproval,
		Prompt: fmt.Sprintf("%s wants to run %s with %s; policy %s needs a human's approval (toolnexus approve %s). Then call again with the same name and arguments and answer {id: %q, ok: true}.",
			e.Principal, e.Tool, e.Summary, e.Policy, e.ID, e.ID),
		Data:      map[string]any{"tool": e.Tool, "principal": e.Principal, "session": e.Session, "argumentsDigest": e.Digest, "policy": e.Policy},
		ExpiresAt: e.ExpiresAt,
	}
}

// summarize is the canonical arguments, cut to what a person reads in a
// prompt; the digest, not the summary, binds the approval.
func summarize(canon []byte) string {
	const max = 400
	if len(canon) <= max {
		return string(canon)
	}
	return string(canon[:max]) + fmt.Sprintf("… (%d bytes more)", len(canon)-max)
}

// mayDecide reports whether p may list and decide approvals.
func (c *Core) mayDecide(p *auth.Principal) bool {
	if p == nil || p.Admin {
		return p != nil // auth off: no one is distinct from the caller
	}
	ps := c.policy.Load()
	if ps == nil {
		return false
	}
	return policy.IsApprover(ps.approvers, p.Name, p.Groups)
}

// Approvals lists every approval held, newest first, for an approver.
func (c *Core) Approvals(ctx context.Context, p *auth.Principal) ([]approval.Entry, error) {
	if !c.mayDecide(p) {
		return nil, ErrNotApprover
	}
	return c.pol.approvals.List(ctx)
}

// DecideApproval approves or denies a pending approval as p, and records
// who decided in the audit log.
func (c *Core) DecideApproval(ctx context.Context, p *auth.Principal, id string, approve bool, reason string) (approval.Entry, error) {
	if !c.mayDecide(p) {
		return approval.Entry{}, ErrNotApprover
	}
	e, err := c.pol.approvals.Decide(ctx, id, p.Name, approve, reason)
	if err != nil {
		return e, err
	}
	c.audit.ApprovalDecided(ctx, audit.Approval{ID: e.ID, Decider: p.Name, Requester: e.Principal, Tool: e.Tool,
		Policy: e.Policy, Digest: e.Digest, Approved: approve, Reason: reason})
	c.log.LogAttrs(ctx, slog.LevelInfo, "approval decided", slog.String("approval", e.ID), slog.String("decided_by", p.Name),
		slog.String("status", string(e.Status)), slog.String("tool", e.Tool), slog.String("principal", e.Principal))
	return e, nil
}
