package mcpgateway_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil/inproc"
	"github.com/toolnexus/toolnexus/internal/testutil/mcpclient"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// debugOnly serves the four debug tools and nothing else.
const debugOnly = `{"debug": true, "builtins": false, "skills": []}`

// echoTool is a native tool that returns its arguments.
func echoTool(name string) tool.Tool {
	return tool.Must(tool.Native(name, func(_ context.Context, args map[string]any) (any, error) {
		return args, nil
	}, tool.WithDescription("echo "+name)))
}

// gw is a core served by /mcp — and by gRPC, to compare the two doors —
// on loopback in this process (internal/testutil/inproc).
type gw struct {
	*inproc.Rig
	url  string // http://127.0.0.1:PORT/mcp
	ws   string // the builtin tools' workspace
	grpc pb.RegistryServiceClient
}

// startGateway serves cfgJSON, with these native tools, until the test ends.
func startGateway(t testing.TB, cfgJSON string, native ...tool.Tool) *gw {
	t.Helper()
	return startGatewayWith(t, cfgJSON, inproc.Options{Native: native})
}

// startGatewayLogging is startGateway logging to log.
func startGatewayLogging(t testing.TB, log *slog.Logger, cfgJSON string, native ...tool.Tool) *gw {
	t.Helper()
	return startGatewayWith(t, cfgJSON, inproc.Options{Native: native, Logger: log})
}

func startGatewayWith(t testing.TB, cfgJSON string, opts inproc.Options) *gw {
	t.Helper()
	r := inproc.Start(t, cfgJSON, opts)
	return &gw{Rig: r, url: r.MCPURL, ws: r.Workspace(), grpc: r.Registry}
}

// connect opens a go-sdk client session at 2025-11-25 (token "" sends
// none) that fails at once on a refusal; opts may carry a list_changed
// handler. The session closes with the test.
func (g *gw) connect(t testing.TB, token string, opts *mcp.ClientOptions) (*mcp.ClientSession, error) {
	t.Helper()
	return mcpclient.Connect(t, g.url, mcpclient.Dial{Token: token, Client: opts})
}

func (g *gw) mustConnect(t testing.TB, token string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return mcpclient.MustConnect(t, g.url, mcpclient.Dial{Token: token, Client: opts})
}
