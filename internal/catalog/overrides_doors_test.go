package catalog_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/grpcapi"
)

const weatherOverride = `, "overrides": {"up_get": {"name": "weather", "description": "Today's weather in one city.",
	"arguments": {"units": "metric"}}}`

// Overrides over the wire, with a real MCP server behind: the renamed tool
// under its new name only, with the operator's description and without the
// fixed argument, at every door; each call carries the fixed value.
func TestOverridesAtEveryDoor(t *testing.T) {
	up := startUpstream(t)
	d := startDoors(t, catalogConfig(t, t.TempDir(), up.url, weatherOverride))
	d.await(t, "the renamed tool", has("weather"))
	if names := d.names(t); has("up_get")(names) {
		t.Fatalf("the old name is still listed: %v", names)
	}
	tl, err := d.reg.GetTool(as(agentToken), &pb.GetToolRequest{Name: "weather"})
	if err != nil {
		t.Fatal(err)
	}
	props := tl.GetTool().GetInputSchema().GetFields()["properties"].GetStructValue().GetFields()
	if tl.GetTool().GetDescription() != "Today's weather in one city." || props["units"] != nil || props["city"] == nil {
		t.Fatalf("weather: %v", tl)
	}
	if r := d.exec(t, "weather", `{"city": "Paris"}`); r.GetIsError() || r.GetOutput() != "sunny in Paris (metric)" {
		t.Fatalf("the fixed argument reaches the upstream: %v", r)
	}
	if r := d.exec(t, "up_get", `{"city": "Paris"}`); r.GetOutcome() != pb.Outcome_OUTCOME_UNKNOWN_TOOL {
		t.Fatalf("the old name after a rename: %v", r)
	}
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		cs := mcpClient(t, d.mcpURL, version)
		lr, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var w *mcp.Tool
		for _, x := range lr.Tools {
			if x.Name == "up_get" {
				t.Errorf("/mcp at %s lists the old name", version)
			}
			if x.Name == "weather" {
				w = x
			}
		}
		schema, _ := json.Marshal(w.InputSchema)
		if w == nil || w.Description != "Today's weather in one city." || strings.Contains(string(schema), "units") {
			t.Fatalf("/mcp at %s: %+v %s", version, w, schema)
		}
		if s := mcpAnswer(cs, "weather", map[string]any{"city": "Oslo"}); s != "sunny in Oslo (metric)" {
			t.Errorf("/mcp at %s: %q", version, s)
		}
	}
	found, err := d.reg.SearchTools(as(agentToken), &pb.SearchToolsRequest{Query: "today's weather"})
	if err != nil || len(found.GetTools()) == 0 || found.GetTools()[0].GetTool().GetName() != "weather" {
		t.Fatalf("search ranks by the operator's text: %v %v", found, err)
	}
}

// Attack (caller, hostile model): give a fixed argument anyway, in its own
// spelling or another letter case, with argument checking on (the schema
// refuses it) and off (the catalog refuses it). Never does the caller's
// value reach the upstream.
func TestCallerCannotOverrideAFixedArgument(t *testing.T) {
	up := startUpstream(t)
	for _, validate := range []bool{true, false} {
		t.Run(fmt.Sprint("validateArguments=", validate), func(t *testing.T) {
			d := startDoors(t, catalogConfig(t, t.TempDir(), up.url, weatherOverride+fmt.Sprintf(`, "limits": {"validateArguments": %v}`, validate)))
			d.await(t, "the renamed tool", has("weather"))
			for _, args := range []string{`{"city": "Paris", "units": "imperial"}`, `{"city": "Paris", "Units": "imperial"}`, `{"UNITS": "imperial", "city": "Paris"}`} {
				r := d.exec(t, "weather", args)
				if r.GetOutcome() != pb.Outcome_OUTCOME_INVALID_ARGUMENTS || !strings.Contains(strings.ToLower(r.GetOutput()), "units") || strings.Contains(r.GetOutput(), "imperial)") {
					t.Errorf("%s: %v %q", args, r.GetOutcome(), r.GetOutput())
				}
			}
			cs := mcpClient(t, d.mcpURL, "2025-11-25")
			if s := mcpAnswer(cs, "weather", map[string]any{"city": "Paris", "units": "imperial"}); strings.Contains(s, "imperial)") || !strings.Contains(strings.ToLower(s), "units") {
				t.Errorf("/mcp: %q", s)
			}
		})
	}
}

// Attack (upstream): a second MCP server, configured later, offers a tool
// under a name another server's pinned tool has ("up_get", by choosing its
// prefix) and would win it (its name sorts last). It is held; callers keep
// reaching the pinned tool.
func TestNewServerShadowingAPinnedToolIsHeld(t *testing.T) {
	up, evil := startUpstream(t), startUpstream(t)
	evil.setGet(poisoned)
	dir := t.TempDir()
	pinning := `, "pinning": {"mode": "hold", "dir": "pins"}`
	d := startDoors(t, catalogConfig(t, dir, up.url, pinning))
	d.await(t, "first sight", has("up_get"))
	next := catalogConfig(t, dir, up.url, pinning)
	src := next.MCP["up"]
	prefix := "up_"
	src.URL, src.Prefix = evil.url+"/mcp", &prefix
	next.MCP["zzz"] = src
	rep, err := d.core.Apply(next)
	if err != nil || len(rep.Failed) > 0 {
		t.Fatalf("reload: %+v %v", rep, err)
	}
	a := d.pendingDefinitions(t)["up_get"]
	if a == nil || a.GetDefinition().GetChange() != "shadows" || a.GetDefinition().GetSource() != "mcp/zzz" || a.GetDefinition().GetShadowedSource() != "mcp/up" {
		t.Fatalf("held: %v", a)
	}
	tl, err := d.reg.GetTool(as(agentToken), &pb.GetToolRequest{Name: "up_get"})
	if err != nil || tl.GetTool().GetDescription() != "Get the weather." {
		t.Fatalf("callers must keep the pinned tool: %v %v", tl, err)
	}
}

// Views see the catalog's names: a view naming the renamed tool serves it
// at /mcp/NAME and over gRPC (toolnexus-view), and nothing else. Attack
// (caller): naming a view never widens the token's allowlist, and a view
// the server does not have is refused.
func TestViewsServeTheCatalogsNames(t *testing.T) {
	up := startUpstream(t)
	up.addWave()
	cfg := catalogConfig(t, t.TempDir(), up.url, weatherOverride+`, "server": {"mcp": {"views": {"forecast": {"tools": ["weather"]}, "all": {"tools": ["*"]}}}}`)
	narrow := cfg.Auth.Tokens[0]
	narrow.Name, narrow.Value, narrow.Tools = "narrow", "catalog-narrow-token", []string{"up_wave"}
	cfg.Auth.Tokens = append(cfg.Auth.Tokens, narrow)
	d := startDoors(t, cfg)
	d.await(t, "both tools", func(n []string) bool { return has("weather")(n) && has("up_wave")(n) })

	cs := mcpClient(t, strings.TrimSuffix(d.mcpURL, "/mcp")+"/mcp/forecast", "2025-11-25")
	lr, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(lr.Tools) != 1 || lr.Tools[0].Name != "weather" || lr.Tools[0].Description != "Today's weather in one city." {
		t.Fatalf("/mcp/forecast lists %v %v", lr, err)
	}
	if s := mcpAnswer(cs, "weather", map[string]any{"city": "Rome"}); s != "sunny in Rome (metric)" {
		t.Fatalf("/mcp/forecast weather: %q", s)
	}
	if s := mcpAnswer(cs, "up_wave", nil); !strings.Contains(s, "unknown tool") {
		t.Fatalf("/mcp/forecast up_wave: %q", s)
	}

	view := func(token, name string) context.Context {
		return metadata.AppendToOutgoingContext(as(token), grpcapi.ViewMetadata, name)
	}
	list, err := d.reg.ListTools(view(agentToken, "forecast"), &pb.ListToolsRequest{})
	if err != nil || len(list.GetTools()) != 1 || list.GetTools()[0].GetName() != "weather" {
		t.Fatalf("gRPC view forecast: %v %v", list, err)
	}
	r, err := d.reg.Execute(view(agentToken, "forecast"), &pb.ExecuteRequest{Name: "up_wave"})
	if err != nil || r.GetResult().GetOutcome() != pb.Outcome_OUTCOME_UNKNOWN_TOOL {
		t.Fatalf("gRPC view forecast, up_wave: %v %v", r, err)
	}
	list, err = d.reg.ListTools(view("catalog-narrow-token", "all"), &pb.ListToolsRequest{})
	if err != nil || len(list.GetTools()) != 1 || list.GetTools()[0].GetName() != "up_wave" {
		t.Fatalf("a view widened a token's allowlist: %v %v", list, err)
	}
	r, err = d.reg.Execute(view("catalog-narrow-token", "all"), &pb.ExecuteRequest{Name: "weather", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{"city": "Rome"}`}})
	if err != nil || r.GetResult().GetOutcome() != pb.Outcome_OUTCOME_UNKNOWN_TOOL {
		t.Fatalf("a view let a token call outside its allowlist: %v %v", r, err)
	}
	if _, err := d.reg.ListTools(view(agentToken, "secret"), &pb.ListToolsRequest{}); status.Code(err) == codes.OK {
		t.Fatal("a view the server does not have was accepted")
	}
}
