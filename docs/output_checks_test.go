package docs_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
)

func init() {
	outputChecks["server-usage"] = checkServerUsage
	outputChecks["invalid-arguments"] = checkInvalidArguments
	outputChecks["protected-resource-metadata"] = checkProtectedResource
	outputChecks["www-authenticate"] = checkWWWAuthenticate
}

var (
	docFlagRE  = regexp.MustCompile(`(?m)^\s+--([a-z-]+)\b.*?(?:\[(TOOLNEXUS_[A-Z_]+)\])?\s*$`)
	helpFlagRE = regexp.MustCompile(`(?m)^  -([a-z-]+)(?: \S+)?\n\s+(.*)$`)
)

// README's "Running it" lists exactly the server's flags, each with the
// variable the server reads for it.
func checkServerUsage(t *testing.T, doc string) {
	buildBinaries(t)
	out, _ := exec.Command(filepath.Join(shared.dir, "bin", "toolnexus-server"), "--help").CombinedOutput()
	help := map[string]string{}
	for _, m := range helpFlagRE.FindAllStringSubmatch(string(out), -1) {
		help[m[1]] = m[2]
	}
	if len(help) < 10 {
		t.Fatalf("could not read the server's --help:\n%s", out)
	}
	documented := map[string]bool{}
	for _, m := range docFlagRE.FindAllStringSubmatch(doc, -1) {
		documented[m[1]] = true
		usage, ok := help[m[1]]
		switch {
		case !ok:
			t.Errorf("--%s is documented but the server has no such flag", m[1])
		case m[2] != "" && !strings.Contains(usage, "["+m[2]):
			t.Errorf("--%s: documented as read from %s; the server says %q", m[1], m[2], usage)
		}
	}
	for f := range help {
		if !documented[f] {
			t.Errorf("the server's --%s is not documented", f)
		}
	}
}

// The argument-check text is what a call with a string for an integer gets.
func checkInvalidArguments(t *testing.T, doc string) {
	conn, err := grpc.NewClient(shared.grpc, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r, err := pb.NewRegistryServiceClient(conn).Execute(context.Background(), &pb.ExecuteRequest{Name: "debug_sleep",
		Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{"ms": "x"}`}})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.GetResult().GetOutput(); strings.TrimSpace(got) != strings.TrimSpace(doc) {
		t.Errorf("the server says:\n%s\nthe page says:\n%s", got, doc)
	}
}

// oidcGateway serves /mcp with the identity provider of docs/auth.md's
// examples (not reachable here: its tokens are refused, the metadata is
// served all the same).
func oidcGateway(t *testing.T) string {
	t.Helper()
	srv := serveConfig(t, t.TempDir(), `{"builtins": false, "skills": [],
		"auth": {"oidc": {"issuer": "https://login.example.com/realms/agents", "audience": "https://tools.example.com/mcp", "requiredScopes": ["tools"]}},
		"server": {"mcp": {"resource": "https://tools.example.com/mcp"}}}`, true)
	return "http://" + srv.MCPAddr().String()
}

func checkProtectedResource(t *testing.T, doc string) {
	resp, err := http.Get(oidcGateway(t) + "/.well-known/oauth-protected-resource")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got, want any
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(doc), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the gateway serves %v; the page says %v", got, want)
	}
}

func checkWWWAuthenticate(t *testing.T, doc string) {
	req, _ := http.NewRequest(http.MethodPost, oidcGateway(t)+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Authorization", "Bearer not-a-token")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := "WWW-Authenticate: " + resp.Header.Get("WWW-Authenticate"); got != strings.TrimSpace(doc) {
		t.Errorf("the gateway answers %d with\n%s\nthe page says\n%s", resp.StatusCode, got, doc)
	}
}
