package console

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/toolnexus/toolnexus/internal/approval"
	"github.com/toolnexus/toolnexus/internal/core"
)

// approvalsPerPage is how many held calls one page shows.
const approvalsPerPage = 50

// decidedShown is how many decided approvals the page lists under the
// held ones.
const decidedShown = 20

// maxReason bounds a decision's reason.
const maxReason = 1000

type heldCall struct {
	ID, Tool, Principal, Session string
	Policy, PolicyReason         string
	Arguments                    string
	CreatedAt, ExpiresAt         time.Time
	Own                          bool
}

type decidedCall struct {
	ID, Tool, Principal, Status, DecidedBy, Reason string
	DecidedAt                                      time.Time
}

type approvalsView struct {
	Held            []heldCall
	Total           int
	Pager           pager
	Decided         []decidedCall
	Definitions     []HeldDefinition
	DefinitionsOn   bool
	DefinitionsNote string
}

// approvalsPage lists the held calls an approver may decide (as
// ApprovalService.ListApprovals), newest first, a page at a time.
func (c *Console) approvalsPage(w http.ResponseWriter, r *http.Request, u *user) {
	ctx, cancel := timeout(r)
	defer cancel()
	list, err := c.opts.Core.Approvals(ctx, u.p)
	if errors.Is(err, core.ErrNotApprover) {
		c.render(w, r, u, http.StatusForbidden, "message", "Approvals", "Only admins and the principals or groups in policy.approvers may list and decide approvals; "+
			"you are "+u.shown()+".")
		return
	}
	if err != nil {
		c.render(w, r, u, http.StatusServiceUnavailable, "message", "Approvals", "The approvals cannot be read right now: "+err.Error())
		return
	}
	v := approvalsView{}
	var pending []approval.Entry
	for _, e := range list {
		if e.Status == approval.Pending {
			pending = append(pending, e)
		} else if len(v.Decided) < decidedShown {
			v.Decided = append(v.Decided, decidedCall{ID: e.ID, Tool: e.Tool, Principal: e.Principal, Status: string(e.Status),
				DecidedBy: e.DecidedBy, Reason: e.Reason, DecidedAt: e.DecidedAt})
		}
	}
	v.Total = len(pending)
	v.Pager = newPager(r, len(pending), approvalsPerPage)
	for _, e := range pending[v.Pager.From:v.Pager.To] {
		v.Held = append(v.Held, heldCall{ID: e.ID, Tool: e.Tool, Principal: e.Principal, Session: e.Session, Policy: e.Policy,
			PolicyReason: e.PolicyReason, Arguments: pretty(e.Summary), CreatedAt: e.CreatedAt, ExpiresAt: e.ExpiresAt, Own: e.Principal == u.name()})
	}
	c.heldDefinitions(r, u, &v)
	c.render(w, r, u, http.StatusOK, "approvals", "Approvals", v)
}

// heldDefinitions adds the tool definitions pinning holds (definitions.go).
func (c *Console) heldDefinitions(r *http.Request, u *user, v *approvalsView) {
	if c.opts.Definitions == nil {
		return
	}
	defs, err := c.opts.Definitions.HeldDefinitions(r.Context(), u.p)
	// The section shows while pinning is on, and after it was turned off
	// while something is still held.
	v.DefinitionsOn = c.opts.Core.Config().Pinning.On() || len(defs) > 0 || err != nil
	switch {
	case errors.Is(err, core.ErrNotApprover):
		v.DefinitionsNote = "Only admins and policy.approvers may decide held tool definitions."
	case err != nil:
		v.DefinitionsNote = "The held tool definitions cannot be read right now: " + err.Error()
	}
	for _, d := range defs {
		if d.Status == string(approval.Pending) {
			v.Definitions = append(v.Definitions, d)
		}
	}
}

// pretty is a call's canonical arguments indented for reading; a summary
// cut short (not valid JSON any more) is shown as it is.
func pretty(summary string) string {
	var b bytes.Buffer
	if json.Indent(&b, []byte(summary), "", "  ") != nil {
		return summary
	}
	return b.String()
}

// decide is the Approve and Deny buttons (ApprovalService.Approve, Deny).
func (c *Console) decide(w http.ResponseWriter, r *http.Request, u *user) {
	approve, reason, ok := decision(r)
	if !ok {
		c.back(w, r, "/approvals", flash{Text: "Choose Approve or Deny."})
		return
	}
	ctx, cancel := timeout(r)
	defer cancel()
	e, err := c.opts.Core.DecideApproval(ctx, u.p, r.PathValue("id"), approve, reason)
	if err != nil {
		c.back(w, r, "/approvals", flash{Text: "Nothing was decided: " + err.Error() + "."})
		return
	}
	text := fmt.Sprintf("Approved %s for %s: their next call with the same arguments runs, once.", e.Tool, e.Principal)
	if !approve {
		text = fmt.Sprintf("Denied %s for %s", e.Tool, e.Principal)
		if reason != "" {
			text += " with the reason: " + reason
		}
		text += "."
	}
	c.back(w, r, "/approvals", flash{OK: true, Text: text})
}

// decideDefinition is the Approve and Deny buttons of a held definition.
func (c *Console) decideDefinition(w http.ResponseWriter, r *http.Request, u *user) {
	approve, reason, ok := decision(r)
	if !ok || c.opts.Definitions == nil {
		c.back(w, r, "/approvals", flash{Text: "Choose Approve or Deny."})
		return
	}
	ctx, cancel := timeout(r)
	defer cancel()
	if err := c.opts.Definitions.DecideDefinition(ctx, u.p, r.PathValue("id"), approve, reason); err != nil {
		c.back(w, r, "/approvals", flash{Text: "Nothing was decided: " + err.Error() + "."})
		return
	}
	text := "Approved the new definition: the tool is served with it from now on."
	if !approve {
		text = "Denied the new definition: it stays held."
	}
	c.back(w, r, "/approvals", flash{OK: true, Text: text})
}

// decision reads an Approve or Deny form.
func decision(r *http.Request) (approve bool, reason string, ok bool) {
	reason = clip(r.PostFormValue("reason"), maxReason)
	switch r.PostFormValue("decision") {
	case "approve":
		return true, reason, true
	case "deny":
		return false, reason, true
	}
	return false, "", false
}

// pager is one page of a list: which items, and the links around it.
type pager struct {
	// Q is the search the pages are of ("" = the whole list).
	Q           string
	From, To    int
	Page, Pages int
	Prev, Next  int // 0 = none
}

// newPager reads ?page= (1-based) over n items, size a page.
func newPager(r *http.Request, n, size int) pager {
	p := pager{Pages: max(1, (n+size-1)/size)}
	p.Page, _ = strconv.Atoi(r.URL.Query().Get("page"))
	p.Page = min(max(p.Page, 1), p.Pages)
	p.From, p.To = (p.Page-1)*size, min(p.Page*size, n)
	if p.Page > 1 {
		p.Prev = p.Page - 1
	}
	if p.Page < p.Pages {
		p.Next = p.Page + 1
	}
	return p
}
