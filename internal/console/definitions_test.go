package console_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/metadata"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/auth"
	"github.com/toolnexus/toolnexus/internal/catalog"
	"github.com/toolnexus/toolnexus/internal/testutil"
)

// Held tool definitions on /approvals (pinning.mode "hold"): a real MCP
// server changes its tool's description at run time, and the new text
// is a hostile upstream's markup.

// evilDescription is the changed description: markup that would run if
// the page put it in as HTML.
const evilDescription = `Get the weather. <script>alert("def")</script><img src=x onerror=alert("def-img")>`

// setGet (re)defines the upstream's tool "get" with desc; AddTool of the
// same name is a changed definition (tools/list_changed).
func setGet(srv *mcp.Server, desc string) {
	type args struct {
		City string `json:"city"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "get", Description: desc}, func(_ context.Context, _ *mcp.CallToolRequest, a args) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sunny in " + a.City}}}, nil, nil
	})
}

// startHeldRig is a rig pinning in hold mode with the MCP server "up",
// whose tool up_get was trusted on first sight and then changed to
// evilDescription; it returns the rig and the held definition.
func startHeldRig(t *testing.T) (*rig, catalog.Held) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "weather", Version: "1"}, nil)
	setGet(srv, "Get the weather.")
	up := testutil.ServeMCP(t, srv)
	r := startRig(t, rigOptions{configPatch: map[string]any{
		"mcpServers": map[string]any{"up": map[string]any{"url": up + "/mcp"}},
		"pinning":    map[string]any{"mode": "hold", "dir": t.TempDir()},
	}})
	eventually(t, 20*time.Second, "up_get trusted on first sight", func() bool { return r.listed(t, "up_get") != "" })
	setGet(srv, evilDescription)
	var held catalog.Held
	eventually(t, 20*time.Second, "the changed description held", func() bool {
		list, err := r.core.HeldDefinitions(context.Background(), opsPrincipal)
		must(t, err)
		i := slices.IndexFunc(list, func(h catalog.Held) bool { return h.Source == "mcp/up" && h.Status == catalog.Pending })
		if i < 0 {
			return false
		}
		held = list[i]
		return true
	})
	if got := r.listed(t, "up_get"); got != "" {
		t.Fatalf("the changed up_get is listed before an approval: %q", got)
	}
	return r, held
}

// opsPrincipal is the rig's admin as the core knows them.
var opsPrincipal = &auth.Principal{Name: "ops", Admin: true}

// listed is the description of the tool name as ListTools shows it to an
// agent over gRPC ("" when it is not listed).
func (r *rig) listed(t testing.TB, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+aliceToken)
	list, err := r.registry.ListTools(ctx, &pb.ListToolsRequest{})
	must(t, err)
	for _, tl := range list.GetTools() {
		if tl.GetName() == name {
			return tl.GetDescription()
		}
	}
	return ""
}

// An approver reads the held definition on /approvals: the source, the
// tool, the change, the field that changed, the pinned and the new text
// side by side; the upstream's markup is text, not elements.
func TestHeldDefinitionShownAsText(t *testing.T) {
	r, held := startHeldRig(t)
	lead := loggedIn(t, r, leadToken)
	resp, body := lead.get("/approvals")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/approvals: %s", resp.Status)
	}
	card := body[strings.Index(body, `id="d-`+held.ID+`"`):]
	card = card[:strings.Index(card, "</article>")]
	for _, want := range []string{"<code>up_get</code> from <code>mcp/up</code> (changed)", "<code>description</code>",
		`&#34;description&#34;: &#34;Get the weather.&#34;`, `action="/definitions/` + held.ID + `"`,
		html.EscapeString(`<script>alert(\"def\")</script><img src=x onerror=alert(\"def-img\")>`)} {
		if !strings.Contains(card, want) {
			t.Errorf("the held definition does not show %s:\n%s", want, card)
		}
	}
	if strings.Contains(body, "<script>alert") || strings.Contains(body, "<img src=x") {
		t.Fatalf("the upstream's markup is on the page as markup:\n%s", card)
	}
}

// Nobody but admins and policy.approvers reads or decides a held
// definition: alice neither sees it nor decides it by posting to its URL
// with her own session's CSRF token, and an approver's form without the
// token decides nothing.
func TestHeldDefinitionNotForNonApprovers(t *testing.T) {
	r, held := startHeldRig(t)
	alice := loggedIn(t, r, aliceToken)
	resp, body := alice.get("/approvals")
	if resp.StatusCode != http.StatusForbidden || strings.Contains(body, held.ID) || strings.Contains(body, "alert(") {
		t.Fatalf("alice's /approvals: %s\n%s", resp.Status, body)
	}
	resp, _ = alice.post("/definitions/"+held.ID, url.Values{"decision": {"approve"}, "csrf": {alice.csrf("/tools")}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("alice's decision: %s", resp.Status)
	}
	if _, flash := alice.get(resp.Header.Get("Location")); !strings.Contains(flash, "Nothing was decided") {
		t.Errorf("alice is not told nothing was decided:\n%s", flash)
	}
	lead := loggedIn(t, r, leadToken)
	if resp, _ := lead.post("/definitions/"+held.ID, url.Values{"decision": {"approve"}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a decision without the CSRF token: %s", resp.Status)
	}
	list, err := r.core.HeldDefinitions(context.Background(), opsPrincipal)
	must(t, err)
	if i := slices.IndexFunc(list, func(h catalog.Held) bool { return h.ID == held.ID }); i < 0 || list[i].Status != catalog.Pending {
		t.Fatalf("the held definition was decided: %+v", list)
	}
	if got := r.listed(t, "up_get"); got != "" {
		t.Fatalf("up_get is listed after refused decisions: %q", got)
	}
}

// An approver approves a held definition in chromium: the markup in it
// is text and runs nothing, and the tool is listed again with the new
// description.
func TestBrowserApproveAHeldDefinition(t *testing.T) {
	r, held := startHeldRig(t)
	b := newTab(t, r.URL)
	b.login(leadToken)
	b.open("/approvals")
	sel := fmt.Sprintf("article[aria-labelledby='d-%s']", held.ID)
	if got := b.text(sel + " .diff > div:last-child pre code"); !strings.Contains(got, `<script>alert(\"def\")</script>`) {
		t.Fatalf("the new definition shown: %q", got)
	}
	if n := b.count("section[aria-labelledby=defs] script, section[aria-labelledby=defs] img"); n != 0 {
		t.Fatalf("%d elements made of the definition's markup", n)
	}
	b.shot("definitions")
	b.do("approve", chromedp.Click(chromedp.CSS(sel+" button[value=approve]")), chromedp.WaitVisible(chromedp.CSS(".flash.good")))
	if got := b.text(".flash"); !strings.Contains(got, "Approved the new definition") {
		t.Fatalf("flash: %q", got)
	}
	if got := r.listed(t, "up_get"); got != evilDescription {
		t.Fatalf("up_get after the approval: %q", got)
	}
	if n := b.count(sel); n != 0 {
		t.Errorf("the approved definition is still listed as held")
	}
	b.noDialogs()
}
