package engine

import (
	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/egress"
	"github.com/toolnexus/toolnexus/internal/policy"
	"github.com/toolnexus/toolnexus/internal/sandbox"
)

// EgressHooks are what the egress proxy reports to: the audit log and
// the Prometheus series (both optional), and the resolver (nil: the
// system's; tests pass their own).
type EgressHooks struct {
	Audit    func(egress.Record)
	Metrics  *egress.Metrics
	Resolver egress.Resolver
}

// egressProxy is the proxy of cfg's sandbox.egress, nil when it is not
// set. Its policy decision reads the policies in force at each
// connection, so a reload that changes only the policy files applies to
// commands already running.
func (e *Engine) egressProxy(cfg *config.Config) sandbox.EgressServer {
	pol := cfg.Policy
	e.egressPolicy.Store(&pol)
	eg := cfg.Sandbox.Egress
	if eg == nil {
		return nil
	}
	rules, tools := eg.Rules()
	h := e.opts.Egress
	return egress.New(egress.Config{
		Rules: rules, Tools: tools, Limits: eg.Limits,
		Resolver: h.Resolver, Audit: h.Audit, Metrics: h.Metrics,
		Decide: e.decideConnect,
	})
}

// decideConnect is the Cedar decision on a connection, when some policy
// names Action::"connect"; in shadow mode it never refuses.
func (e *Engine) decideConnect(r egress.ConnectRequest) *egress.Refusal {
	pol := e.egressPolicy.Load()
	if pol == nil || !pol.Set.DecidesConnect() || pol.Mode == config.PolicyShadow {
		return nil
	}
	v := pol.Set.DecideConnect(policy.ConnectInput{Principal: r.Principal, Host: r.Host, Port: r.Port, Tool: r.Tool, Session: r.Session})
	if v.Effect != policy.Deny {
		return nil
	}
	rule := "policy"
	if v.Policy != "" {
		rule = "policy " + v.Policy
	}
	return &egress.Refusal{Rule: rule, Reason: r.Host + " is " + v.Denial()}
}
