package catalog_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/grpcapi"
	"github.com/toolnexus/toolnexus/internal/testutil"
)

// mcpAnswer is what an MCP client got for one call, result or error.
func mcpAnswer(cs *mcp.ClientSession, name string, args map[string]any) string {
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "error: " + err.Error()
	}
	return mcpText(res)
}

// assertUnknownEverywhere: a held tool is unknown at every door, word for
// word as a name no source offers, and its new text (secret) shows nowhere.
func (d *doors) assertUnknownEverywhere(t *testing.T, name, secret string) {
	t.Helper()
	const never = "up_never_offered"
	if _, err := d.reg.GetTool(as(agentToken), &pb.GetToolRequest{Name: name}); status.Code(err) != codes.NotFound {
		t.Errorf("GetTool %s: %v, want NOT_FOUND", name, err)
	}
	got, want := d.exec(t, name, `{"city": "Paris"}`), d.exec(t, never, `{"city": "Paris"}`)
	if got.GetOutcome() != pb.Outcome_OUTCOME_UNKNOWN_TOOL || asUnknown(got.GetOutput(), name) != asUnknown(want.GetOutput(), never) {
		t.Errorf("Execute %s: %v %q; a never offered name: %q", name, got.GetOutcome(), got.GetOutput(), want.GetOutput())
	}
	found, err := d.reg.SearchTools(as(agentToken), &pb.SearchToolsRequest{Query: "weather city ssh key get wave"})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range found.GetTools() {
		if s.GetTool().GetName() == name || strings.Contains(s.GetTool().GetDescription(), secret) {
			t.Errorf("SearchTools found the held tool: %v", s.GetTool())
		}
	}
	for _, f := range []pb.ExportFormat{pb.ExportFormat_EXPORT_FORMAT_OPENAI, pb.ExportFormat_EXPORT_FORMAT_ANTHROPIC, pb.ExportFormat_EXPORT_FORMAT_GEMINI} {
		ex, err := d.reg.ExportTools(as(agentToken), &pb.ExportToolsRequest{Format: f})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(ex.GetJson(), `"`+name+`"`) || strings.Contains(ex.GetJson(), secret) {
			t.Errorf("ExportTools %v shows the held tool: %s", f, ex.GetJson())
		}
	}
	// The view "all" (heldView) is one more door: it narrows the served
	// view, so it must not bring a held tool back.
	inView := metadata.AppendToOutgoingContext(as(agentToken), grpcapi.ViewMetadata, "all")
	list, err := d.reg.ListTools(inView, &pb.ListToolsRequest{})
	if err != nil || slices.ContainsFunc(list.GetTools(), func(tl *pb.Tool) bool { return tl.GetName() == name }) {
		t.Errorf("gRPC view all lists the held tool %s: %v %v", name, list, err)
	}
	for _, n := range []string{name, never} {
		r, err := d.reg.Execute(inView, &pb.ExecuteRequest{Name: n, Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{"city": "Paris"}`}})
		if err != nil || r.GetResult().GetOutcome() != pb.Outcome_OUTCOME_UNKNOWN_TOOL {
			t.Errorf("gRPC view all, Execute %s: %v %v", n, r, err)
		}
	}
	for _, door := range []string{d.mcpURL, d.mcpURL + "/all"} {
		for _, version := range []string{"2025-11-25", "2026-07-28"} {
			d.assertUnknownAtMCP(t, door, version, name, secret)
		}
	}
	cs := mcpClient(t, d.searchURL, "2025-11-25")
	if s := mcpAnswer(cs, "search_tools", map[string]any{"query": "weather city ssh key get wave"}); strings.Contains(s, name) || strings.Contains(s, secret) {
		t.Errorf("/mcp search_tools found the held tool: %s", s)
	}
	g := mcpAnswer(cs, "call_tool", map[string]any{"name": name, "arguments": map[string]any{"city": "Paris"}})
	w := mcpAnswer(cs, "call_tool", map[string]any{"name": never, "arguments": map[string]any{"city": "Paris"}})
	if asUnknown(g, name) != asUnknown(w, never) {
		t.Errorf("/mcp call_tool %s: %q; a never offered name: %q", name, g, w)
	}
}

// heldView adds the view "all" (every tool) to a held test's config.
const heldView = `, "server": {"mcp": {"views": {"all": {"tools": ["*"]}}}}`

// assertUnknownAtMCP: the /mcp door at url neither lists the held tool nor
// runs it, and answers for it as for a name never offered.
func (d *doors) assertUnknownAtMCP(t *testing.T, url, version, name, secret string) {
	t.Helper()
	const never = "up_never_offered"
	cs := mcpClient(t, url, version)
	lr, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range lr.Tools {
		if tl.Name == name || strings.Contains(tl.Description, secret) {
			t.Errorf("%s at %s lists the held tool: %s", url, version, tl.Name)
		}
	}
	args := map[string]any{"city": "Paris"}
	if g, w := mcpAnswer(cs, name, args), mcpAnswer(cs, never, args); asUnknown(g, name) != asUnknown(w, never) {
		t.Errorf("%s at %s tools/call %s: %q; a never offered name: %q", url, version, name, g, w)
	}
}

// The rug pull over the wire: a real MCP server changes a trusted tool's
// description at run time (tools/list_changed) and adds a tool. Both are
// held — unknown at every door — until ops reads the old and the new text
// in ListApprovals and approves; then both are listed and run. The agent
// may neither list nor decide held definitions.
func TestHeldDefinitionAtEveryDoor(t *testing.T) {
	up := startUpstream(t)
	d := startDoors(t, catalogConfig(t, t.TempDir(), up.url, `, "pinning": {"mode": "hold", "dir": "pins"}`+heldView))
	d.await(t, "first sight is trusted", has("up_get"))
	if r := d.exec(t, "up_get", `{"city": "Paris"}`); r.GetIsError() || !strings.Contains(r.GetOutput(), "sunny in Paris") {
		t.Fatalf("up_get before the change: %v", r)
	}
	up.setGet(poisoned)
	d.await(t, "the changed description is held", lacks("up_get"))
	d.assertUnknownEverywhere(t, "up_get", "id_rsa")

	up.addWave()
	var defs map[string]*pb.Approval
	for defs = d.pendingDefinitions(t); defs["up_wave"] == nil; defs = d.pendingDefinitions(t) {
		d.await(t, "the new tool stays unlisted", lacks("up_wave"))
	}
	d.assertUnknownEverywhere(t, "up_wave", "Wave.")
	get := defs["up_get"]
	if get == nil || get.GetDefinition().GetChange() != "changed" || get.GetDefinition().GetSource() != "mcp/up" ||
		!strings.Contains(get.GetDefinition().GetOldDefinition(), `"Get the weather."`) ||
		!strings.Contains(get.GetDefinition().GetNewDefinition(), "id_rsa") || get.GetDefinition().GetOldDigest() == get.GetDefinition().GetNewDigest() {
		t.Fatalf("the approver must see the old and the new definition: %v", get)
	}
	if w := defs["up_wave"]; w.GetDefinition().GetChange() != "added" || w.GetDefinition().GetOldDefinition() != "" {
		t.Fatalf("the new tool: %v", w)
	}
	if _, err := d.approvals.ListApprovals(as(agentToken), &pb.ListApprovalsRequest{}); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("the agent listed the held definitions: %v", err)
	}
	if _, err := d.approvals.Approve(as(agentToken), &pb.ApproveRequest{Id: get.GetId()}); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("the agent approved a definition: %v", err)
	}
	for _, a := range []*pb.Approval{get, defs["up_wave"]} {
		resp, err := d.approvals.Approve(as(opsToken), &pb.ApproveRequest{Id: a.GetId(), Reason: "read both"})
		if err != nil || resp.GetApproval().GetStatus() != "approved" || resp.GetApproval().GetDecidedBy() != "ops" {
			t.Fatalf("approve %s: %v %v", a.GetId(), resp, err)
		}
	}
	names := d.names(t) // an approval is served on this replica when Approve returns
	if !has("up_get")(names) || !has("up_wave")(names) {
		t.Fatalf("approved tools are back at once: %v", names)
	}
	inView := metadata.AppendToOutgoingContext(as(agentToken), grpcapi.ViewMetadata, "all")
	if list, err := d.reg.ListTools(inView, &pb.ListToolsRequest{}); err != nil || len(list.GetTools()) != 2 {
		t.Fatalf("the view all serves the approved tools: %v %v", list, err)
	}
	tl, err := d.reg.GetTool(as(agentToken), &pb.GetToolRequest{Name: "up_get"})
	if err != nil || tl.GetTool().GetDescription() != poisoned {
		t.Fatalf("the approved definition is the one served: %v %v", tl, err)
	}
	if r := d.exec(t, "up_wave", `{}`); r.GetIsError() || r.GetOutput() != "👋" {
		t.Fatalf("up_wave after approval: %v", r)
	}
	if _, err := d.approvals.Deny(as(opsToken), &pb.DenyRequest{Id: get.GetId()}); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("deciding twice: %v", err)
	}
}

// Held across a restart: the upstream changes while toolnexus is down;
// the next start holds the change at its first listing.
func TestHeldAcrossARestart(t *testing.T) {
	up := startUpstream(t)
	dir := t.TempDir()
	extra := `, "pinning": {"mode": "hold", "dir": "pins"}` + heldView
	first := startDoors(t, catalogConfig(t, dir, up.url, extra))
	first.await(t, "first sight", has("up_get"))
	first.close()

	up.setGet(poisoned)
	second := startDoors(t, catalogConfig(t, dir, up.url, extra))
	if names := second.names(t); has("up_get")(names) {
		t.Fatalf("a change made while down is served at start: %v", names)
	}
	a := second.pendingDefinitions(t)["up_get"]
	if a == nil || !strings.Contains(a.GetDefinition().GetOldDefinition(), "Get the weather.") {
		t.Fatalf("held at start: %v", a)
	}
	second.assertUnknownEverywhere(t, "up_get", "id_rsa")
}

// Warn mode serves the changed definition, and counts, audits and lists it.
func TestWarnServesAndCountsOverTheWire(t *testing.T) {
	up := startUpstream(t)
	d := startDoors(t, catalogConfig(t, t.TempDir(), up.url, `, "pinning": {"mode": "warn", "dir": "pins"}`))
	d.await(t, "first sight", has("up_get"))
	up.setGet(poisoned)
	deadline := time.Now().Add(10 * time.Second)
	for {
		tl, err := d.reg.GetTool(as(agentToken), &pb.GetToolRequest{Name: "up_get"})
		if err == nil && tl.GetTool().GetDescription() == poisoned {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("warn mode never served the changed text: %v %v", tl, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := counter(t, d, "toolnexus_definition_changes_total", "mcp"); got != 1 {
		t.Fatalf("toolnexus_definition_changes_total{source=mcp} = %v, want 1", got)
	}
	if a := d.pendingDefinitions(t)["up_get"]; a == nil {
		t.Fatal("warn mode lists the change for an approver to acknowledge")
	}
}

func counter(t *testing.T, d *doors, name, source string) float64 {
	t.Helper()
	mfs, err := d.prom.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "source" && l.GetValue() == source {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	b, _ := json.Marshal(mfs)
	t.Fatalf("no %s{source=%q} in %s", name, source, b)
	return 0
}

// With cluster.redis the pins live in Redis: two replicas judge against
// the same pins, both hold the rug pull, and an approval on one is served
// by the other within the recheck interval.
func TestPinsInRedisSharedByReplicas(t *testing.T) {
	up := startUpstream(t)
	redis := testutil.StartRedis(t)
	extra := `, "pinning": {"mode": "hold"}, "cluster": {"name": "test", "redis": {"url": "` + redis.URL + `", "timeout": 2000}}`
	a := startDoors(t, catalogConfig(t, t.TempDir(), up.url, extra))
	b := startDoors(t, catalogConfig(t, t.TempDir(), up.url, extra))
	a.await(t, "first sight on a", has("up_get"))
	b.await(t, "first sight on b", has("up_get"))
	up.setGet(poisoned)
	a.await(t, "held on a", lacks("up_get"))
	b.await(t, "held on b", lacks("up_get"))
	held := b.pendingDefinitions(t)["up_get"]
	if held == nil {
		t.Fatal("replica b does not list the held definition")
	}
	if _, err := a.approvals.Approve(as(opsToken), &pb.ApproveRequest{Id: held.GetId()}); err != nil {
		t.Fatal(err)
	}
	b.await(t, "approved on a, served on b", has("up_get"))
	if _, err := b.approvals.Deny(as(opsToken), &pb.DenyRequest{Id: held.GetId()}); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("a second decision on the other replica: %v", err)
	}
}
