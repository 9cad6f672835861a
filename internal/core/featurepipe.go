package core

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/toolnexus/toolnexus/internal/audit"
	"github.com/toolnexus/toolnexus/internal/metrics"
	"github.com/toolnexus/toolnexus/internal/policy"
	"github.com/toolnexus/toolnexus/internal/session"
	"github.com/toolnexus/toolnexus/pkg/feature"
	"github.com/toolnexus/toolnexus/pkg/registry"
)

// The methods of a feature request, as MCP names them (the metrics and
// audit label; gRPC's RPCs count under the same names).
const (
	methodRead      = "resources/read"
	methodGet       = "prompts/get"
	methodComplete  = "completion/complete"
	methodSubscribe = "resources/subscribe"
)

// featureFlow is one feature request on its way through the steps.
type featureFlow struct {
	FeatureCall
	method string
	// target is the URI or name as served; action the policy action.
	target, action string
	// asked is the URI as the caller wrote it, when target is its
	// canonical form: a refusal names what was asked, nothing more.
	asked string
	// layer and server are the resolved target; server is nil for a
	// target no server offers or the caller may not see.
	layer  registry.LayerID
	server feature.Server
	// completes: the server answers completion/complete.
	completes bool
	// hidden: the target exists but the caller may not see it. It is
	// answered as not found; the metrics and audit line say denied.
	hidden bool
}

func (f *featureFlow) resolve(layer registry.LayerID, s feature.Server) {
	f.layer, f.server = layer, s
}

// found resolves a target the caller sees, or marks one it may not.
func (f *featureFlow) found(layer registry.LayerID, s feature.Server, visible bool) {
	if !visible {
		f.layer, f.hidden = layer, true
		return
	}
	f.resolve(layer, s)
}

func (f *featureFlow) resolveCompletion(snap *registry.FeatureSnapshot, layer registry.LayerID, visible bool) {
	set, _ := snap.Set(layer)
	f.found(layer, set.Server, visible)
	f.completes = set.Completions && visible
}

// featureRun is the request's own work: the bytes it returned and its error.
type featureRun func(ctx context.Context) (int, error)

// runFeature takes a resolved request through the steps, in this order
// (docs/mcp-2026.md, "Resources, prompts and completions"):
//
//  1. observe: the metrics and the audit line see every outcome;
//  2. view: a target no server offers, or outside the caller's allowlist
//     or the door's, is not found — the same answer, so probing tells
//     nothing;
//  3. rate limit: the principal's own bucket (limits.principals);
//  4. policy: Cedar, when some policy names the request's action;
//  5. session: a malformed id, sessions.required;
//  6. limits: limits.timeout around the run;
//  7. run: the server's answer, refused over limits.maxResourceBytes.
func (c *Core) runFeature(ctx context.Context, f *featureFlow, run featureRun) error {
	start := time.Now()
	n, err := c.featureSteps(ctx, f, run)
	c.observeFeature(ctx, f, start, n, err)
	return err
}

func (c *Core) featureSteps(ctx context.Context, f *featureFlow, run featureRun) (int, error) {
	if f.server == nil {
		return 0, notFound(f)
	}
	if l := c.limiter.Load(); l != nil {
		ticket, refused := l.Admit(policyPrincipal(f.Caller), f.method, time.Now())
		if refused != nil {
			return 0, &feature.Error{Kind: feature.Throttled, Limit: refused.Limit, RetryAfter: refused.RetryAfter,
				Msg: fmt.Sprintf("rate limited by %s: retry after %s", refused.Limit, refused.RetryAfter.Round(time.Millisecond))}
		}
		defer ticket.Release()
	}
	if err := c.featurePolicy(ctx, f); err != nil {
		return 0, err
	}
	if err := c.featureSession(f); err != nil {
		return 0, err
	}
	if t := c.cfg.Load().Limits.Timeout; t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t)
		defer cancel()
	}
	n, err := run(ctx)
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) && feature.KindOf(err) == feature.Unavailable {
		err = feature.Errorf(feature.Unavailable, "%s %s: timed out after %dms (limits.timeout)", f.method, f.target, c.cfg.Load().Limits.Timeout.Milliseconds())
	}
	return n, err
}

// notFound is the answer for a target that is unknown or hidden alike.
func notFound(f *featureFlow) error {
	if f.action == policy.ActionGet && f.method != methodComplete {
		return feature.Errorf(feature.NotFound, "unknown prompt %q", f.target)
	}
	if f.asked != "" {
		return feature.Errorf(feature.NotFound, "resource not found: %s", f.asked)
	}
	return feature.Errorf(feature.NotFound, "resource not found: %s", f.target)
}

// featurePolicy asks the Cedar policies, when some policy names the
// request's action.
func (c *Core) featurePolicy(ctx context.Context, f *featureFlow) error {
	ps := c.policy.Load()
	if ps == nil || !ps.set.DecidesFeature(f.action) {
		return nil
	}
	in := policy.FeatureInput{Principal: policyPrincipal(f.Caller), Action: f.action, Target: f.target, Server: f.layer.Name,
		Session: f.Session, Protocol: f.Protocol}
	if f.Caller != nil {
		in.Groups = f.Caller.Groups
	}
	v := ps.set.DecideFeature(in)
	if v.Effect != policy.Deny {
		return nil
	}
	if ps.shadow {
		c.log.InfoContext(ctx, "policy would deny (shadow mode)", "method", f.method, "target", f.target, "principal", in.Principal, "policy", v.Policy)
		return nil
	}
	return feature.Errorf(feature.Denied, "%s", v.Denial())
}

// featureSession refuses a malformed session id and, with
// sessions.required, a request without one. Reading a resource touches no
// workspace, so no lease is taken.
func (c *Core) featureSession(f *featureFlow) error {
	if f.Session == "" {
		if c.cfg.Load().Sessions.Required {
			return feature.Errorf(feature.InvalidArgument, "%s: this server has sessions.required on", ErrSessionRequired.Error())
		}
		return nil
	}
	if err := session.Validate(f.Session); err != nil {
		return feature.Errorf(feature.InvalidArgument, "%s", err.Error())
	}
	return nil
}

// checkSize refuses an answer over limits.maxResourceBytes.
func (c *Core) checkSize(n int, what string) error {
	if max := c.cfg.Load().Limits.MaxResourceBytes; max > 0 && n > max {
		return &feature.Error{Kind: feature.TooLarge, Limit: "limits.maxResourceBytes",
			Msg: fmt.Sprintf("%s: the MCP server returned %d bytes, over limits.maxResourceBytes (%d); raise it to serve this", what, n, max)}
	}
	return nil
}

// featureOutcomes are the outcome label's values.
var featureOutcomes = []string{"ok", feature.NotFound.String(), feature.Denied.String(), feature.InvalidArgument.String(),
	feature.TooLarge.String(), feature.Throttled.String(), feature.Unavailable.String(), feature.Upstream.String()}

// observeFeature counts the request and writes its audit line.
func (c *Core) observeFeature(ctx context.Context, f *featureFlow, start time.Time, n int, err error) {
	outcome := "ok"
	if err != nil {
		outcome = feature.KindOf(err).String()
	}
	kind, name := metrics.UnknownLabel, metrics.UnknownLabel
	if f.server != nil || f.hidden {
		kind, name = f.layer.Kind.String(), f.layer.Name
	}
	if f.hidden {
		outcome = feature.Denied.String()
	}
	d := time.Since(start)
	c.featureMetrics.Requests.WithLabelValues(kind, name, f.method, outcome, f.Protocol).Inc()
	c.featureMetrics.Duration.WithLabelValues(kind, name, f.method).Observe(d.Seconds())
	if c.audit.On() {
		a := audit.Feature{Method: f.method, Protocol: f.Protocol, Session: f.Session, Target: f.target, Source: metrics.UnknownLabel,
			Outcome: outcome, Duration: d, Bytes: n}
		if f.server != nil || f.hidden {
			a.Source = f.layer.String()
		}
		if f.Caller != nil {
			a.Principal = f.Caller.Name
		}
		c.audit.Feature(ctx, a)
	}
}
