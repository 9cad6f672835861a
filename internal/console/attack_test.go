package console_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/console"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// The attacks of docs/console.md's threat list, over real HTTP against a
// real core. The browser tests (browser_test.go) show the same defences
// in chromium.

// Nothing but the login page (and its stylesheet) answers without a
// session: every page sends the browser to the login, every action is
// refused and does nothing.
func TestNothingWithoutASession(t *testing.T) {
	r := startRig(t, rigOptions{})
	p := newPerson(t, r)
	for _, path := range []string{"/", "/approvals", "/connections", "/sources", "/tools?q=deploy", "/sessions", "/audit"} {
		resp, _ := p.get(path)
		if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/login?next=") {
			t.Errorf("GET %s without a session: %s %s", path, resp.Status, resp.Header.Get("Location"))
		}
	}
	id := r.hold(t, "", `{"service":"api"}`)
	for _, path := range []string{"/approvals/" + id, "/sources/reload", "/sessions/delete", "/connections/connect", "/logout"} {
		resp, body := p.post(path, url.Values{"decision": {"approve"}, "csrf": {"guess"}})
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "session has ended") {
			t.Errorf("POST %s without a session: %s", path, resp.Status)
		}
	}
	if res := r.execute(t, aliceToken, "", "deploy", `{"service":"api"}`, &pb.Answer{Id: id, Ok: true}); !res.GetIsError() {
		t.Fatalf("the approval was decided without a session: %v", res)
	}
	if resp, body := p.get("/login"); resp.StatusCode != http.StatusOK || !strings.Contains(body, `type="password"`) || !strings.Contains(body, `name="token"`) {
		t.Fatalf("login page: %s", resp.Status)
	}
	if resp, _ := p.get("/static/console.css"); resp.StatusCode != http.StatusOK {
		t.Fatalf("stylesheet: %s", resp.Status)
	}
}

// A form without the session's CSRF token, or with another session's, or
// from another origin, changes nothing.
func TestCSRFRefused(t *testing.T) {
	r := startRig(t, rigOptions{})
	lead := loggedIn(t, r, leadToken)
	ops := loggedIn(t, r, opsToken)
	id := r.hold(t, "", `{"service":"api"}`)
	for name, form := range map[string]url.Values{
		"no token":             {"decision": {"approve"}},
		"another session's":    {"decision": {"approve"}, "csrf": {ops.csrf("/tools")}},
		"the session cookie":   {"decision": {"approve"}, "csrf": {lead.cookie("toolnexus-session")}},
		"an empty token":       {"decision": {"approve"}, "csrf": {""}},
		"a token of the login": {"decision": {"approve"}, "csrf": {newPerson(t, r).csrf("/login")}},
	} {
		if resp, _ := lead.post("/approvals/"+id, form); resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: %s", name, resp.Status)
		}
	}
	good := lead.csrf("/approvals")
	for name, origin := range map[string]string{"another origin": "http://evil.example", "null": "null", "another port": "http://127.0.0.1:1"} {
		lead.origin = origin
		if resp, body := lead.post("/approvals/"+id, url.Values{"decision": {"approve"}, "csrf": {good}}); resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "another origin") {
			t.Errorf("%s: %s", name, resp.Status)
		}
	}
	lead.origin = r.URL
	req, _ := http.NewRequest(http.MethodPost, r.URL+"/approvals/"+id, strings.NewReader(url.Values{"decision": {"approve"}, "csrf": {good}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	resp, err := lead.c.Do(req)
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("Sec-Fetch-Site cross-site: %s", resp.Status)
	}
	if res := r.execute(t, aliceToken, "", "deploy", `{"service":"api"}`, &pb.Answer{Id: id, Ok: true}); !res.GetIsError() {
		t.Fatalf("a refused form decided the approval: %v", res)
	}
}

// Session fixation: a cookie the browser had before logging in never
// becomes the session; logging out ends the session on the server, so
// the old cookie is worth nothing.
func TestSessionFixationAndLogout(t *testing.T) {
	r := startRig(t, rigOptions{})
	p := newPerson(t, r)
	u, _ := url.Parse(r.URL)
	planted := "planted-by-an-attacker-0123456789abcdef"
	p.c.Jar.SetCookies(u, []*http.Cookie{{Name: "toolnexus-session", Value: planted, Path: "/"}})
	if resp := p.login(leadToken); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("login: %s", resp.Status)
	}
	sid := p.cookie("toolnexus-session")
	if sid == "" || sid == planted {
		t.Fatalf("the session id is %q after login (planted %q)", sid, planted)
	}
	stale := newPerson(t, r)
	stale.c.Jar.SetCookies(u, []*http.Cookie{{Name: "toolnexus-session", Value: sid, Path: "/"}})
	if resp, _ := stale.get("/tools"); resp.StatusCode != http.StatusOK {
		t.Fatalf("the session does not work from another client: %s", resp.Status)
	}
	if resp, body := p.post("/logout", url.Values{"csrf": {p.csrf("/tools")}}); resp.StatusCode != http.StatusOK || !strings.Contains(body, "logged out") {
		t.Fatalf("logout: %s", resp.Status)
	}
	if resp, _ := stale.get("/tools"); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("the session still works after logout: %s", resp.Status)
	}
}

// Every console page forbids framing and inline script, and its cookies
// are HttpOnly and SameSite=Lax.
func TestClickjackingHeadersAndCookies(t *testing.T) {
	r := startRig(t, rigOptions{})
	p := loggedIn(t, r, opsToken)
	for _, path := range []string{"/login", "/approvals", "/tools", "/sources", "/sessions", "/audit", "/connections"} {
		resp, _ := p.get(path)
		csp := resp.Header.Get("Content-Security-Policy")
		if csp != console.CSP || !strings.Contains(csp, "frame-ancestors 'none'") || strings.Contains(csp, "unsafe-inline") {
			t.Errorf("%s: Content-Security-Policy %q", path, csp)
		}
		if resp.Header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s: X-Frame-Options %q", path, resp.Header.Get("X-Frame-Options"))
		}
	}
	resp := newPerson(t, r).login(leadToken)
	for _, c := range resp.Cookies() {
		if c.Value != "" && (!c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/") {
			t.Errorf("cookie %s: HttpOnly %v SameSite %v Path %q", c.Name, c.HttpOnly, c.SameSite, c.Path)
		}
	}
}

// Guessing tokens is slowed down: after five wrong tries from one address
// the next is refused for a while, the right token too.
func TestLoginBruteForceThrottled(t *testing.T) {
	r := startRig(t, rigOptions{})
	p := newPerson(t, r)
	for i := range 5 {
		resp, body := p.post("/login", url.Values{"csrf": {p.csrf("/login")}, "token": {"guess-" + string(rune('a'+i))}})
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "not valid") {
			t.Fatalf("try %d: %s", i, resp.Status)
		}
	}
	resp, body := p.post("/login", url.Values{"csrf": {p.csrf("/login")}, "token": {leadToken}})
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "Too many login attempts") {
		t.Fatalf("sixth try: %s %q", resp.Status, resp.Header.Get("Retry-After"))
	}
}

// A person who is not an admin cannot reach the admins' actions by typing
// their URLs or posting their forms.
func TestNonAdminByURL(t *testing.T) {
	r := startRig(t, rigOptions{})
	r.execute(t, aliceToken, "alice-s1", "echo", `{}`, nil) // makes alice's session
	lead := loggedIn(t, r, leadToken)
	alice := loggedIn(t, r, aliceToken)
	if resp, body := lead.get("/sources"); resp.StatusCode != http.StatusForbidden || strings.Contains(body, "tickets") {
		t.Errorf("GET /sources as an approver: %s", resp.Status)
	}
	csrf := lead.csrf("/tools")
	for path, form := range map[string]url.Values{
		"/sources/reload":         {"csrf": {csrf}},
		"/sessions/delete":        {"csrf": {csrf}, "id": {"alice-s1"}, "principal": {"alice"}},
		"/connections/disconnect": {"csrf": {csrf}, "name": {"tickets"}, "principal": {"alice"}},
	} {
		resp, _ := lead.post(path, form)
		_, page := lead.get(resp.Header.Get("Location"))
		if resp.StatusCode != http.StatusSeeOther || !strings.Contains(page, "Only an admin") {
			t.Errorf("POST %s as an approver: %s", path, resp.Status)
		}
	}
	if _, body := alice.get("/sessions"); !strings.Contains(body, "alice-s1") {
		t.Fatalf("alice's session is gone after the refused delete")
	}
	id := r.hold(t, "", `{"service":"api"}`)
	if resp, body := alice.get("/approvals"); resp.StatusCode != http.StatusForbidden || strings.Contains(body, id) {
		t.Errorf("GET /approvals as a caller who is no approver: %s", resp.Status)
	}
	resp, _ := alice.post("/approvals/"+id, url.Values{"csrf": {alice.csrf("/tools")}, "decision": {"approve"}})
	if _, page := alice.get(resp.Header.Get("Location")); !strings.Contains(page, "Nothing was decided") {
		t.Errorf("alice approved her own call: %s", page)
	}
}

// Markup in what a hostile model sends (arguments), what an upstream
// publishes (a tool description) or fails with (a source's error) is
// shown as text, never as markup.
func TestMarkupIsText(t *testing.T) {
	const evil = `<script>alert(1)</script><img src=x onerror=alert(2)>`
	hostile := tool.Must(tool.New("hostile", func(context.Context, tool.Call) tool.Result { return tool.Result{} },
		tool.WithDescription("Reads "+evil), tool.WithInputSchema(json.RawMessage(`{"type":"object","description":"`+strings.ReplaceAll(evil, `"`, `\"`)+`"}`))))
	r := startRig(t, rigOptions{extraTools: []tool.Tool{hostile},
		configPatch: map[string]any{"mcpServers": map[string]any{"broken": map[string]any{"command": evil}}}})
	r.hold(t, "", `{"service":"api","note":`+quote(evil)+`}`)
	ops := loggedIn(t, r, opsToken)
	for _, path := range []string{"/approvals", "/tools?q=reads", "/tools", "/sources"} {
		_, body := ops.get(path)
		if strings.Contains(body, "<script>alert") || strings.Contains(body, "<img src=x") {
			t.Errorf("%s renders markup it was sent", path)
		}
		if !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Errorf("%s does not show the text it was sent", path)
		}
	}
}

// A page from another host name (DNS rebinding: a site whose name now
// resolves to the console's address) gets nothing; a login's next never
// leaves the console.
func TestRebindingAndOpenRedirect(t *testing.T) {
	r := startRig(t, rigOptions{})
	req, _ := http.NewRequest(http.MethodGet, r.URL+"/login", nil)
	req.Host = "evil.example:80"
	resp, err := noRedirects.Do(req)
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusMisdirectedRequest {
		t.Fatalf("Host evil.example: %s", resp.Status)
	}
	for _, next := range []string{"//evil.example/x", "https://evil.example", `/\evil.example`, "/login"} {
		p := newPerson(t, r)
		resp, _ := p.post("/login", url.Values{"csrf": {p.csrf("/login")}, "token": {leadToken}, "next": {next}})
		if loc := resp.Header.Get("Location"); loc != "/" {
			t.Errorf("next %q: redirected to %q", next, loc)
		}
	}
}
