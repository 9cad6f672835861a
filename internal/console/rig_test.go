package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/console"
	"github.com/toolnexus/toolnexus/internal/core"
	"github.com/toolnexus/toolnexus/internal/grpcapi"
	"github.com/toolnexus/toolnexus/internal/suspend"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/internal/testutil/oauthmcp"
	"github.com/toolnexus/toolnexus/internal/testutil/oidcop"
	"github.com/toolnexus/toolnexus/internal/vault"
	"github.com/toolnexus/toolnexus/internal/web"
	"github.com/toolnexus/toolnexus/pkg/sources/oauthclient"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// The tokens of the rig's callers: ops is an admin, lead an approver
// (policy.approvers) and nothing more, alice an agent's owner.
const (
	opsToken   = "tok-ops-0123456789abcdef"
	leadToken  = "tok-lead-0123456789abcdef"
	aliceToken = "tok-alice-0123456789abcdef"
)

// policyText holds every deploy for a human, and lets everything else run.
const policyText = `@id("everything")
permit(principal, action, resource);

@id("deploys-need-a-human")
@approval("required")
@reason("a human reads every deploy first")
permit(principal, action, resource == Tool::"deploy");
`

// rig is a console over a real core: the gRPC front-end on loopback (the
// agents' side), the web listener with the console and the OAuth callback
// (the people's side), a real OpenID provider and an MCP server under
// OAuth.
type rig struct {
	core     *core.Core
	web      *web.Server
	console  *console.Console
	registry pb.RegistryServiceClient
	op       *oidcop.Provider
	mcp      *oauthmcp.Server
	manager  *oauthclient.Manager
	// URL is the console's base URL.
	URL string
}

// rigOptions shape a rig.
type rigOptions struct {
	// extraTools are served beside deploy.
	extraTools []tool.Tool
	// configPatch is merged into the config's top-level object.
	configPatch map[string]any
	// store keeps the console's sessions (default: a memory vault).
	store console.Store
	// noAuth serves without auth.
	noAuth bool
}

// deployTool is the tool the policy holds: it says what it deployed.
func deployTool() tool.Tool {
	type args struct {
		Service string `json:"service" jsonschema:"description=The service to deploy"`
		Note    string `json:"note,omitempty" jsonschema:"description=Why"`
	}
	return tool.Must(tool.Typed("deploy", func(ctx context.Context, a args) (any, error) {
		return "deployed " + a.Service, nil
	}, tool.WithDescription("Deploy a service to production")))
}

// echoTool runs at once and says what it got.
func echoTool() tool.Tool {
	return tool.Must(tool.Native("echo", func(ctx context.Context, args map[string]any) (any, error) { return args, nil },
		tool.WithDescription("Echo the arguments back")))
}

func startRig(t testing.TB, o rigOptions) *rig {
	t.Helper()
	r := &rig{}
	r.web = web.New(web.Options{Addr: "127.0.0.1:0", Logger: quiet()})
	if err := r.web.Listen(); err != nil {
		t.Fatal(err)
	}
	r.URL = r.web.BaseURL()
	r.op = oidcop.Start(t, oidcop.Client{ID: "console", Secret: "console-secret", RedirectURIs: []string{r.URL + console.OIDCCallbackPath}})
	r.mcp = oauthmcp.Start(t, r.op, "mcp:tools")
	cfg := r.config(t, o)
	v, err := vault.New(vault.NewMemory(), vault.RandomKeys())
	if err != nil {
		t.Fatal(err)
	}
	suspended := suspend.NewMemory(nil, 0)
	r.manager = oauthclient.New(oauthclient.Options{Vault: v, Suspended: suspended, Logger: quiet(),
		RedirectURL: func() string { return r.web.URL(oauthclient.CallbackPath) }})
	r.core, err = core.New(cfg, core.Options{Logger: quiet(), Native: append([]tool.Tool{deployTool(), echoTool()}, o.extraTools...),
		AuditStderr: io.Discard, Suspended: suspended, OAuth: r.manager})
	if err != nil {
		t.Fatal(err)
	}
	store := o.store
	if store == nil {
		store = v
	}
	r.console = console.New(console.Options{Core: r.core, Connections: r.manager, Store: store, BaseURL: r.web.BaseURL,
		Logger: quiet(), Reload: func(context.Context) (core.Report, error) { return r.core.Apply(cfg) },
		Definitions: console.CatalogDefinitions(r.core)})
	r.console.Mount(r.web)
	r.web.Handle("GET "+oauthclient.CallbackPath, r.console.WrapCallback(r.manager.Callback()))
	r.web.Serve(make(chan error, 1))
	r.registry = r.serveGRPC(t)
	t.Cleanup(func() {
		r.web.Shutdown(context.Background())
		r.manager.Close()
		if err := r.core.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return r
}

// config is the rig's config: three static tokens, the provider as an
// issuer named corp (group reviewers approves), the policy, the audit log,
// sessions, the MCP server "tickets" under OAuth and the console's OIDC
// login.
func (r *rig) config(t testing.TB, o rigOptions) *config.Config {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "policy.cedar"), []byte(policyText), 0o600); err != nil {
		t.Fatal(err)
	}
	top := map[string]any{
		"builtins": false,
		"sandbox":  map[string]any{"mode": "off"},
		"auth": map[string]any{
			"tokens": []any{
				map[string]any{"name": "ops", "token": opsToken, "admin": true},
				map[string]any{"name": "lead", "token": leadToken},
				map[string]any{"name": "alice", "token": aliceToken},
			},
			"oidc":   []any{map[string]any{"issuer": r.op.Issuer, "audience": "toolnexus", "name": "corp"}},
			"groups": map[string]any{"reviewers": map[string]any{"tools": []string{"*"}}, "operators": map[string]any{"tools": []string{"*"}, "admin": true}},
		},
		"policy":   map[string]any{"files": []string{"policy.cedar"}, "approvers": []string{"lead", "group:reviewers"}},
		"audit":    map[string]any{"enabled": true},
		"sessions": map[string]any{"root": filepath.Join(dir, "sessions")},
		"server": map[string]any{"web": map[string]any{"listen": r.web.Addr().String(),
			"oidc": map[string]any{"clientId": "console", "clientSecret": "console-secret", "scopes": []string{"openid", "groups"}}}},
		"mcpServers": map[string]any{"tickets": map[string]any{"url": r.mcp.URL, "oauth": map[string]any{}, "timeout": 10000}},
	}
	if o.noAuth {
		delete(top, "auth")
		delete(top, "policy")
		top["server"] = map[string]any{"web": map[string]any{"listen": r.web.Addr().String()}}
	}
	for k, v := range o.configPatch {
		top[k] = v
	}
	b, err := json.Marshal(top)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(b, "", dir)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// serveGRPC serves the core's gRPC front-end on loopback: how agents call.
func (r *rig) serveGRPC(t testing.TB) pb.RegistryServiceClient {
	t.Helper()
	shutdown := make(chan struct{})
	api := grpcapi.New(r.core, grpcapi.Options{Logger: quiet(), Shutdown: shutdown})
	gs := grpc.NewServer(api.ServerOptions()...)
	api.Register(gs)
	conn := testutil.ServeGRPC(t, gs)
	t.Cleanup(func() { close(shutdown) }) // before the server stops: its streams end
	return pb.NewRegistryServiceClient(conn)
}

// execute is an agent's call over gRPC as the caller with token, in
// session (none when ""), resuming answer when set.
func (r *rig) execute(t testing.TB, token, session, name, args string, answer *pb.Answer) *pb.ToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
	if session != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, grpcapi.SessionMetadata, session)
	}
	resp, err := r.registry.Execute(ctx, &pb.ExecuteRequest{Name: name, Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: args}, Answer: answer})
	if err != nil {
		t.Fatalf("Execute %s: %v", name, err)
	}
	return resp.GetResult()
}

// hold makes alice's call of deploy with args wait for an approval and
// returns the approval's id.
func (r *rig) hold(t testing.TB, session, args string) string {
	t.Helper()
	res := r.execute(t, aliceToken, session, "deploy", args, nil)
	if res.GetOutcome() != pb.Outcome_OUTCOME_PENDING || res.GetPending().GetKind() != core.PendingKindApproval {
		t.Fatalf("deploy was not held: %v", res)
	}
	return res.GetPending().GetId()
}

// quiet is a logger for what a test does not read.
func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// noRedirects is an HTTP client that shows each answer as it is and keeps
// no connection open after a test.
var noRedirects = &http.Client{
	Transport:     &http.Transport{DisableKeepAlives: true},
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	Timeout:       20 * time.Second,
}

// must fails the test on err.
func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func quote(s string) string { return fmt.Sprintf("%q", s) }
