package console

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/toolnexus/toolnexus/internal/audit"
	"github.com/toolnexus/toolnexus/internal/auth"
	"github.com/toolnexus/toolnexus/internal/core"
	"github.com/toolnexus/toolnexus/internal/search"
	"github.com/toolnexus/toolnexus/internal/session"
	"github.com/toolnexus/toolnexus/pkg/registry"
)

// The read-mostly pages: sources (admins, as SourceService), tools (as
// ListTools and SearchTools), sessions (as SessionService) and the
// recent audit lines.

// sourcesPage is SourceService.ListSources, for admins only.
func (c *Console) sourcesPage(w http.ResponseWriter, r *http.Request, u *user) {
	if !u.admin() {
		c.render(w, r, u, http.StatusForbidden, "message", "Sources", "Sources are for admins, as SourceService is on gRPC: "+
			"it shows every source, its errors and paths whatever a token may use. Ask for a token with \"admin\": true.")
		return
	}
	c.render(w, r, u, http.StatusOK, "sources", "Sources", sourcesView{Sources: c.opts.Core.Sources()})
}

type sourcesView struct{ Sources []core.SourceInfo }

// reload is SourceService.Reload (admins).
func (c *Console) reload(w http.ResponseWriter, r *http.Request, u *user) {
	if !u.admin() || c.opts.Reload == nil {
		c.back(w, r, "/sources", flash{Text: "Only an admin reloads the server."})
		return
	}
	ctx := r.Context()
	if u.p != nil {
		ctx = auth.With(ctx, u.p) // the audit line names who reloaded
	}
	rep, err := c.opts.Reload(ctx)
	if err != nil {
		c.back(w, r, "/sources", flash{Text: "Reload rejected, the previous config keeps serving: " + err.Error()})
		return
	}
	c.log.Info("console: reload", "principal", u.name(), "revision", rep.Revision)
	text := fmt.Sprintf("Reloaded: registry revision %d.", rep.Revision)
	if len(rep.Started) > 0 {
		text += " Started anew: " + strings.Join(rep.Started, ", ") + "."
	}
	if len(rep.Removed) > 0 {
		text += " Removed: " + strings.Join(rep.Removed, ", ") + "."
	}
	c.back(w, r, "/sources", flash{OK: true, Text: text})
}

// toolsPerPage is how many tools one page lists; a search shows its best
// toolsPerPage.
const toolsPerPage = 100

// maxQuery bounds a search, as SearchTools does.
const maxQuery = 1024

type toolRow struct {
	Name, Source, Description string
	Schema                    string
	Score                     string
}

type toolsView struct {
	Query   string
	Problem string
	Tools   []toolRow
	Total   int
	Pager   pager
}

// toolsPage lists the tools the person may use by name, or with a query
// the best matches (SearchTools' ranking), each with its input schema.
func (c *Console) toolsPage(w http.ResponseWriter, r *http.Request, u *user) {
	snap := c.opts.Core.Snapshot()
	v := toolsView{Query: r.URL.Query().Get("q")}
	keep := func(e *registry.Entry) bool { return u.p.Allows(e.Tool.Name, e.Tool.Source) }
	switch {
	case len(v.Query) > maxQuery:
		v.Problem = fmt.Sprintf("The search is %d bytes; the limit is %d: describe the tool in a sentence.", len(v.Query), maxQuery)
	case strings.TrimSpace(v.Query) != "":
		// The person's own allowlist is the search's view: scores and
		// timing depend on nothing else (as SearchTools' do).
		for _, h := range c.search.For(snap, search.Intersect(u.p)).Search(v.Query, toolsPerPage, nil).Hits {
			v.Tools = append(v.Tools, rowOf(h.Entry, fmt.Sprintf("%.2f", h.Score)))
		}
		v.Total = len(v.Tools)
		v.Pager = pager{Page: 1, Pages: 1}
	default:
		var mine []*registry.Entry
		for _, e := range snap.Entries() {
			if keep(e) {
				mine = append(mine, e)
			}
		}
		v.Total = len(mine)
		v.Pager = newPager(r, len(mine), toolsPerPage)
		v.Pager.Q = v.Query
		for _, e := range mine[v.Pager.From:v.Pager.To] {
			v.Tools = append(v.Tools, rowOf(e, ""))
		}
	}
	c.render(w, r, u, http.StatusOK, "tools", "Tools", v)
}

func rowOf(e *registry.Entry, score string) toolRow {
	var b bytes.Buffer
	schema := string(e.Tool.InputSchema)
	if json.Indent(&b, e.Tool.InputSchema, "", "  ") == nil {
		schema = b.String()
	}
	return toolRow{Name: e.Tool.Name, Source: e.Tool.Source, Description: e.Tool.Description, Schema: schema, Score: score}
}

type sessionsView struct {
	Sessions []core.SessionInfo
	All      bool
}

// sessionsPage is SessionService.ListSessions: the person's own sessions,
// an admin's every principal's.
func (c *Console) sessionsPage(w http.ResponseWriter, r *http.Request, u *user) {
	c.render(w, r, u, http.StatusOK, "sessions", "Sessions", sessionsView{Sessions: c.opts.Core.Sessions(u.name(), u.admin()), All: u.admin()})
}

// deleteSession is SessionService.DeleteSession: one's own session, or an
// admin's any.
func (c *Console) deleteSession(w http.ResponseWriter, r *http.Request, u *user) {
	id, owner := r.PostFormValue("id"), u.name()
	if p := r.PostFormValue("principal"); p != owner {
		if !u.admin() {
			c.back(w, r, "/sessions", flash{Text: "Only an admin deletes another principal's session."})
			return
		}
		owner = p
		if u.p == nil && p == session.Anonymous {
			owner = "" // without auth, sessions belong to no token
		}
	}
	err := c.opts.Core.DeleteSession(owner, id)
	switch {
	case err == nil:
		c.back(w, r, "/sessions", flash{OK: true, Text: "Deleted the session " + id + " and its workspace."})
	case errors.Is(err, core.ErrSessionNotFound):
		c.back(w, r, "/sessions", flash{Text: "There is no session " + id + " to delete."})
	case errors.Is(err, core.ErrSessionBusy):
		c.back(w, r, "/sessions", flash{Text: "The session " + id + " has a call running; try again when it ends."})
	default:
		c.back(w, r, "/sessions", flash{Text: "Nothing was deleted: " + err.Error() + "."})
	}
}

// auditShown is how many lines /audit shows at most.
const auditShown = 200

type auditView struct {
	On              bool
	All             bool
	Principal, Tool string
	Lines           []audit.Recorded
	Kept            int
}

// auditPage shows the newest call lines of this replica's audit log: an
// admin's every caller's, anyone else's their own, filtered by principal
// and tool.
func (c *Console) auditPage(w http.ResponseWriter, r *http.Request, u *user) {
	q := r.URL.Query()
	v := auditView{On: c.opts.Core.Audit().On(), All: u.admin(), Principal: q.Get("principal"), Tool: q.Get("tool"), Kept: audit.RecentCalls}
	me := u.name()
	v.Lines = c.opts.Core.Audit().Recent(auditShown, func(l *audit.Recorded) bool {
		if !v.All && l.Principal != me {
			return false
		}
		return (v.Principal == "" || l.Principal == v.Principal) && (v.Tool == "" || l.Tool == v.Tool)
	})
	c.render(w, r, u, http.StatusOK, "audit", "Audit", v)
}
