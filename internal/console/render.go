package console

import (
	"bytes"
	"embed"
	"encoding/base64"
	"encoding/json"
	"html/template"
	"io/fs"
	"net/http"
	"sync"
	"time"

	"github.com/toolnexus/toolnexus/internal/policy"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed assets
var assetFiles embed.FS

// pages are the page templates, each the layout plus its own "content".
var pages = func() map[string]*template.Template {
	layout := template.Must(template.New("layout.html").Funcs(funcs).ParseFS(templateFiles, "templates/layout.html"))
	names, _ := fs.Glob(templateFiles, "templates/*.html")
	out := map[string]*template.Template{}
	for _, n := range names {
		name := n[len("templates/") : len(n)-len(".html")]
		if name == "layout" {
			continue
		}
		out[name] = template.Must(template.Must(layout.Clone()).ParseFS(templateFiles, n))
	}
	return out
}()

var funcs = template.FuncMap{
	"age":  age,
	"when": func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") },
	"decideForm": func(path, idPrefix, id, csrf string) decideForm {
		return decideForm{Action: path + id, ReasonID: idPrefix + id, CSRF: csrf}
	},
}

// decideForm is the Approve/Deny form of a held call or a held
// definition (templates/approvals.html, "decide").
type decideForm struct{ Action, ReasonID, CSRF string }

// assetHandler serves the stylesheet and the script from the binary.
func assetHandler() http.Handler {
	sub, _ := fs.Sub(assetFiles, "assets")
	files := http.FileServerFS(sub)
	return http.StripPrefix("/static/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The files change only with the binary; no-store (the
		// listener's default) would refetch them on every page.
		w.Header().Set("Cache-Control", "private, max-age=300")
		files.ServeHTTP(w, r)
	}))
}

// view is what the layout renders around a page's content.
type view struct {
	Title string
	// User is the person's shown name; empty on the login page and
	// refusals (no navigation then).
	User string
	Nav  []navLink
	CSRF string
	// Flash is the outcome of the person's last action.
	Flash *flash
	// Script loads console.js (the pages that update themselves).
	Script bool
	Body   any
}

type navLink struct {
	Path, Label string
	Current     bool
}

// flash is a message carried across the redirect after a POST.
type flash struct {
	OK   bool   `json:"ok"`
	Text string `json:"text"`
}

// bufPool keeps the buffers pages render into: a page is written only
// once complete, so a template error never sends half a page.
var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// render writes the page name for u with body.
func (c *Console) render(w http.ResponseWriter, r *http.Request, u *user, status int, name, title string, body any) {
	v := view{Title: title, Body: body, Script: name == "approvals"}
	if u != nil {
		v.User, v.CSRF, v.Nav = u.shown(), u.login.CSRF, c.nav(u, r.URL.Path)
		v.Flash = c.takeFlash(w, r)
	}
	c.write(w, status, name, v)
}

func (c *Console) write(w http.ResponseWriter, status int, name string, v view) {
	buf := bufPool.Get().(*bytes.Buffer)
	defer func() {
		buf.Reset()
		bufPool.Put(buf)
	}()
	if err := pages[name].ExecuteTemplate(buf, "layout.html", v); err != nil {
		c.log.Error("console: a page failed to render", "page", name, "error", err)
		http.Error(w, "the page failed to render (the server logged why)", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// refuse writes a page that says what was refused and why, without the
// navigation (the request may have no session).
func (c *Console) refuse(w http.ResponseWriter, status int, title, text string) {
	c.write(w, status, "message", view{Title: title, Body: text})
}

// nav is the navigation u sees: only the pages u may use.
func (c *Console) nav(u *user, current string) []navLink {
	links := make([]navLink, 0, 6)
	add := func(path, label string) {
		links = append(links, navLink{Path: path, Label: label, Current: current == path})
	}
	if c.mayApprove(u) {
		add("/approvals", "Approvals")
	}
	add("/connections", "Connections")
	add("/tools", "Tools")
	add("/sessions", "Sessions")
	if u.admin() {
		add("/sources", "Sources")
	}
	add("/audit", "Audit")
	return links
}

// mayApprove is whether u is offered /approvals: admins and
// policy.approvers, as the core decides (the page asks the core itself).
func (c *Console) mayApprove(u *user) bool {
	if u.p == nil {
		return false
	}
	return u.p.Admin || policy.IsApprover(c.opts.Core.Config().Policy.Approvers, u.p.Name, u.p.Groups)
}

// back answers an action: a redirect to path (303, so a reload does not
// post again), with f shown there once.
func (c *Console) back(w http.ResponseWriter, r *http.Request, path string, f flash) {
	b, _ := json.Marshal(f)
	http.SetCookie(w, c.cookie(c.named("toolnexus-flash"), base64.RawURLEncoding.EncodeToString(b), time.Minute))
	http.Redirect(w, r, path, http.StatusSeeOther)
}

// takeFlash reads and clears the flash cookie. A cookie is used, not the
// query: a link someone sends cannot make the console say anything.
func (c *Console) takeFlash(w http.ResponseWriter, r *http.Request) *flash {
	ck, err := r.Cookie(c.named("toolnexus-flash"))
	if err != nil {
		return nil
	}
	http.SetCookie(w, c.cookie(c.named("toolnexus-flash"), "", -1))
	b, err := base64.RawURLEncoding.DecodeString(ck.Value)
	var f flash
	if err != nil || json.Unmarshal(b, &f) != nil || f.Text == "" {
		return nil
	}
	return &f
}

// age says how long ago t was, as a person reads it.
func age(t time.Time) string {
	d := time.Since(t).Round(time.Second)
	switch {
	case d < time.Minute:
		return d.String()
	case d < time.Hour:
		return d.Round(time.Minute).String()
	}
	return d.Round(time.Hour).String()
}
