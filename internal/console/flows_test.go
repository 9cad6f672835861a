package console_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/approval"
	"github.com/toolnexus/toolnexus/internal/auth"
	"github.com/toolnexus/toolnexus/internal/testutil/oidcop"
)

// The console in chromium, as the people who run toolnexus use it.

const evilNote = `<script>alert("args")</script><img src=x onerror=alert("img")>`

// An approver logs in with a token, sees the held call with its arguments
// (a hostile model's markup shown as text, never run), sees a second call
// arrive without reloading, approves the first, and the caller's next
// call runs.
func TestBrowserApproveThenTheCallRuns(t *testing.T) {
	r := startRig(t, rigOptions{})
	first := r.hold(t, "s-approve", `{"service":"api","note":`+quote(evilNote)+`}`)
	b := newTab(t, r.URL)
	b.login(leadToken)
	if loc := b.location(); !strings.HasSuffix(loc, "/approvals") {
		t.Fatalf("an approver lands on %s", loc)
	}
	sel := fmt.Sprintf("article[aria-labelledby='t-%s']", first)
	args := b.text(sel + " pre code")
	if !strings.Contains(args, `"service": "api"`) || !strings.Contains(args, `<script>alert(\"args\")</script><img src=x`) {
		t.Fatalf("the arguments shown: %q", args)
	}
	if n := b.count("#held script, #held img"); n != 0 {
		t.Fatalf("%d elements made of the arguments' markup", n)
	}
	for _, want := range []string{"alice", "s-approve", "deploys-need-a-human", "a human reads every deploy first"} {
		if !strings.Contains(b.text(sel+" dl"), want) {
			t.Errorf("the held call does not show %q", want)
		}
	}
	second := r.hold(t, "s-approve", `{"service":"web"}`)
	b.do("the list updates by itself", chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf("article[aria-labelledby='t-%s']", second))))
	if got := b.text("#held-count"); !strings.Contains(got, "2 calls waiting") {
		t.Errorf("count: %q", got)
	}
	b.shot("approvals")
	b.do("approve", chromedp.Click(chromedp.CSS(sel+" button[value=approve]")), chromedp.WaitVisible(chromedp.CSS(".flash.good")))
	if got := b.text(".flash"); !strings.Contains(got, "Approved deploy for alice") {
		t.Fatalf("flash: %q", got)
	}
	res := r.execute(t, aliceToken, "s-approve", "deploy", `{"service":"api","note":`+quote(evilNote)+`}`, &pb.Answer{Id: first, Ok: true})
	if res.GetIsError() || res.GetOutput() != "deployed api" {
		t.Fatalf("the approved call: %v", res)
	}
	b.noDialogs()
}

// An approver denies with a reason; the caller's retry is refused with it.
func TestBrowserDenyWithAReason(t *testing.T) {
	r := startRig(t, rigOptions{})
	id := r.hold(t, "", `{"service":"db"}`)
	b := newTab(t, r.URL)
	b.login(leadToken)
	sel := fmt.Sprintf("article[aria-labelledby='t-%s']", id)
	b.do("deny", chromedp.SendKeys(chromedp.ID("r-"+id), "not on a Friday"), chromedp.Click(chromedp.CSS(sel+" button[value=deny]")),
		chromedp.WaitVisible(chromedp.CSS(".flash.good")))
	if got := b.text(".flash"); !strings.Contains(got, "Denied deploy for alice with the reason: not on a Friday") {
		t.Fatalf("flash: %q", got)
	}
	res := r.execute(t, aliceToken, "", "deploy", `{"service":"db"}`, &pb.Answer{Id: id, Ok: true})
	if !res.GetIsError() || !strings.Contains(res.GetOutput(), "not on a Friday") {
		t.Fatalf("the denied call: %v", res)
	}
	if got := b.text("#decided"); got == "" {
		t.Fatal("no decided section")
	}
}

// A caller connects their account at an OAuth upstream from
// /connections: the upstream's login, the callback, back to the console;
// then their call runs as their account.
func TestBrowserConnectAnAccount(t *testing.T) {
	r := startRig(t, rigOptions{})
	adminConnect(t, r)
	if res := r.execute(t, aliceToken, "", "tickets_whoami", `{}`, nil); res.GetOutcome() != pb.Outcome_OUTCOME_PENDING {
		t.Fatalf("before connecting: %v", res)
	}
	b := newTab(t, r.URL)
	b.login(aliceToken)
	b.open("/connections")
	b.shot("connections-before")
	b.do("connect", chromedp.Click(chromedp.CSS("form[action='/connections/connect'] button")), chromedp.WaitVisible(chromedp.ID("continue")))
	b.do("continue to the provider", chromedp.Click(chromedp.ID("continue")), chromedp.WaitVisible(chromedp.CSS("input[name=user]")))
	b.do("log in at the provider", chromedp.SendKeys(chromedp.CSS("input[name=user]"), "alice"), chromedp.Click(chromedp.CSS("button")),
		chromedp.WaitVisible(chromedp.CSS(".flash.good")))
	if loc := b.location(); !strings.HasSuffix(loc, "/connections") {
		t.Fatalf("the login returned to %s", loc)
	}
	if got := b.text("#mine + table, section[aria-labelledby=mine]"); !strings.Contains(got, "tickets") {
		t.Fatalf("the connection is not listed: %q", got)
	}
	b.shot("connections")
	if res := r.execute(t, aliceToken, "", "tickets_whoami", `{}`, nil); res.GetOutput() != "you are alice" {
		t.Fatalf("after connecting: %v", res)
	}
}

// adminConnect is the admin's connection the upstream's tools are listed
// with, made as `toolnexus connect` makes it.
func adminConnect(t *testing.T, r *rig) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	f, err := r.manager.Connect(ctx, "ops", "tickets", true)
	must(t, err)
	if status, page := oidcop.NewBrowser().Login(t, f.URL, "ops", nil); status != http.StatusOK {
		t.Fatalf("admin connect: %d %s", status, page)
	}
	must(t, r.manager.Wait(ctx, f.ID))
	eventually(t, 15*time.Second, "the upstream's tools listed", func() bool {
		_, ok := r.core.Snapshot().Lookup("tickets_whoami")
		return ok
	})
}

// The search box ranks the tools the caller may use; a tool's schema
// opens under its name.
func TestBrowserSearchTools(t *testing.T) {
	r := startRig(t, rigOptions{})
	b := newTab(t, r.URL)
	b.login(aliceToken)
	if loc := b.location(); !strings.HasSuffix(loc, "/tools") {
		t.Fatalf("a caller who approves nothing lands on %s", loc)
	}
	b.do("search", chromedp.SendKeys(chromedp.CSS("input[type=search][name=q]"), "deploy a service\n"),
		chromedp.WaitVisible(chromedp.CSS("ul.tools li")))
	if got := b.text("ul.tools li code.name"); got != "deploy" {
		t.Fatalf("best match %q", got)
	}
	b.do("open the schema", chromedp.Click(chromedp.CSS("ul.tools li summary")), chromedp.WaitVisible(chromedp.CSS("ul.tools li pre")))
	if got := b.text("ul.tools li pre"); !strings.Contains(got, `"service"`) {
		t.Fatalf("schema: %q", got)
	}
	b.shot("tools")
}

// An approver who is not an admin sees the approvals but only their own
// sessions, no sources, and no other caller's audit lines.
func TestBrowserApproverIsNotAnAdmin(t *testing.T) {
	r := startRig(t, rigOptions{})
	r.execute(t, aliceToken, "alice-work", "echo", `{"x":1}`, nil)
	r.execute(t, leadToken, "lead-work", "echo", `{"x":2}`, nil)
	id := r.hold(t, "", `{"service":"api"}`)
	b := newTab(t, r.URL)
	b.login(leadToken)
	if b.count(fmt.Sprintf("article[aria-labelledby='t-%s']", id)) != 1 {
		t.Fatal("the approver does not see the held call")
	}
	if nav := b.text("nav[aria-label=Console]"); !strings.Contains(nav, "Approvals") || strings.Contains(nav, "Sources") {
		t.Fatalf("navigation: %q", nav)
	}
	b.open("/sessions")
	if got := b.text("main"); !strings.Contains(got, "lead-work") || strings.Contains(got, "alice-work") {
		t.Fatalf("sessions: %q", got)
	}
	b.open("/audit")
	if got := b.text("main"); !strings.Contains(got, "echo") || strings.Contains(got, "alice") {
		t.Fatalf("audit: %q", got)
	}
	b.open("/sources")
	if got := b.text("main"); !strings.Contains(got, "Sources are for admins") {
		t.Fatalf("sources: %q", got)
	}
}

// An admin's pages: every session (and deleting one), the sources with
// their errors and the reload button, the audit lines filtered.
func TestBrowserAdminPages(t *testing.T) {
	r := startRig(t, rigOptions{configPatch: map[string]any{"mcpServers": map[string]any{
		"broken": map[string]any{"command": "/nonexistent/mcp-server"}}}})
	r.execute(t, aliceToken, "alice-work", "echo", `{"x":1}`, nil)
	r.execute(t, leadToken, "lead-work", "echo", `{"x":2}`, nil)
	b := newTab(t, r.URL)
	b.login(opsToken)
	b.open("/sessions")
	b.shot("sessions")
	b.do("delete alice's session", chromedp.Click(chromedp.CSS("form[action='/sessions/delete']:has(input[value=alice-work]) button")),
		chromedp.WaitVisible(chromedp.CSS(".flash.good")))
	if got := b.text("main"); strings.Contains(got, "alice-work</code>") || !strings.Contains(got, "lead-work") {
		t.Fatalf("sessions after delete: %q", got)
	}
	b.open("/sources")
	if got := b.text("main"); !strings.Contains(got, "mcp/broken") || !strings.Contains(got, "failed") {
		t.Fatalf("sources: %q", got)
	}
	b.do("reload", chromedp.Click(chromedp.CSS("form[action='/sources/reload'] button")), chromedp.WaitVisible(chromedp.CSS(".flash.good")))
	b.shot("sources")
	b.open("/audit?principal=alice&tool=echo")
	if got := b.text("main table"); !strings.Contains(got, "alice") || strings.Contains(got, "lead") {
		t.Fatalf("audit filtered: %q", got)
	}
	b.open("/audit")
	b.shot("audit")
}

// Without a session every page sends the browser to the login, and back
// to the page after it.
func TestBrowserNoPageWithoutASession(t *testing.T) {
	r := startRig(t, rigOptions{})
	b := newTab(t, r.URL)
	for _, path := range []string{"/approvals", "/sessions", "/sources", "/audit", "/connections", "/tools"} {
		b.open(path)
		if loc := b.location(); !strings.Contains(loc, "/login?next=") || b.count("input[type=password][name=token]") != 1 {
			t.Fatalf("%s without a session: %s", path, loc)
		}
	}
	b.shot("login")
	b.do("log in", chromedp.SendKeys(chromedp.ID("token"), opsToken), chromedp.Click(chromedp.CSS("form[action='/login'] button")),
		chromedp.WaitVisible(chromedp.CSS("nav[aria-label=Console]")))
	if loc := b.location(); !strings.HasSuffix(loc, "/tools") {
		t.Fatalf("after the login: %s, want back on /tools", loc)
	}
}

// A page of another site that posts the approve form, with the person
// logged in, gets it refused; the call stays held.
func TestBrowserCrossSitePostRefused(t *testing.T) {
	r := startRig(t, rigOptions{})
	id := r.hold(t, "", `{"service":"api"}`)
	evil := evilSite(t, r.URL+"/approvals/"+id)
	b := newTab(t, r.URL)
	b.login(leadToken)
	for _, host := range []string{"127.0.0.1", "localhost"} { // same site, other port; another site
		b.do("visit the attacker's page", chromedp.Navigate("http://"+host+":"+evil), chromedp.WaitVisible(chromedp.CSS("main h1")))
		if got := b.text("main"); !strings.Contains(got, "another site") && !strings.Contains(got, "session has ended") {
			t.Fatalf("from %s the console answered: %q", host, got)
		}
	}
	ctx := context.Background()
	list, err := r.core.Approvals(ctx, auth.NewPrincipal("ops", nil, true))
	must(t, err)
	if len(list) != 1 || list[0].Status != approval.Pending {
		t.Fatalf("after the cross-site posts: %+v", list)
	}
	b.noDialogs()
}

// evilSite serves a page that posts the approve form to target at once;
// it returns its port.
func evilSite(t *testing.T, target string) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><form id="f" method="post" action="%s"><input name="decision" value="approve"><input name="csrf" value="guessed"></form>
<script>document.getElementById("f").submit()</script>`, target)
	})}
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(func() { srv.Close() })
	_, port, _ := net.SplitHostPort(lis.Addr().String())
	return port
}

// A person of the identity provider logs in with "Log in with corp":
// authorization code with PKCE at the test provider; their groups claim
// makes them an approver, as it would on gRPC.
func TestBrowserOIDCLogin(t *testing.T) {
	r := startRig(t, rigOptions{})
	r.op.SetGroups("carol", "reviewers")
	id := r.hold(t, "", `{"service":"api"}`)
	b := newTab(t, r.URL)
	b.open("/login")
	b.do("log in with the provider", chromedp.Click(chromedp.CSS("a[href^='/login/oidc']")), chromedp.WaitVisible(chromedp.CSS("input[name=user]")))
	b.do("log in at the provider", chromedp.SendKeys(chromedp.CSS("input[name=user]"), "carol"), chromedp.Click(chromedp.CSS("button")),
		chromedp.WaitVisible(chromedp.CSS("nav[aria-label=Console]")))
	if who := b.text(".who strong"); who != "corp:carol" {
		t.Fatalf("logged in as %q", who)
	}
	if b.count(fmt.Sprintf("article[aria-labelledby='t-%s']", id)) != 1 {
		t.Fatalf("the reviewer does not see the held call (at %s)", b.location())
	}
	if nav := b.text("nav[aria-label=Console]"); strings.Contains(nav, "Sources") {
		t.Fatalf("a reviewer is offered the admins' pages: %q", nav)
	}
	r.op.SetGroups("dave") // no group: logs in, approves nothing
	d := newTab(t, r.URL)
	d.do("log in as dave", chromedp.Navigate(r.URL+"/login/oidc"), chromedp.WaitVisible(chromedp.CSS("input[name=user]")), chromedp.SendKeys(chromedp.CSS("input[name=user]"), "dave"), chromedp.Click(chromedp.CSS("button")),
		chromedp.WaitVisible(chromedp.CSS("nav[aria-label=Console]")))
	d.open("/approvals")
	if got := d.text("main"); !strings.Contains(got, "Only admins and the principals or groups in policy.approvers") {
		t.Fatalf("dave's approvals page: %q", got)
	}
}
