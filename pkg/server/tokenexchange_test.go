package server_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil/oidcop"
)

// upstreamRecorder is an HTTP upstream that keeps every Authorization
// header it is sent.
type upstreamRecorder struct {
	mu   sync.Mutex
	seen []string
}

func (u *upstreamRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u.mu.Lock()
	u.seen = append(u.seen, r.Header.Get("Authorization"))
	u.mu.Unlock()
	_, _ = w.Write([]byte("ok"))
}

func (u *upstreamRecorder) headers() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.seen...)
}

// audIs says whether a decoded "aud" claim (one string or a list) is
// exactly want.
func audIs(aud any, want string) bool {
	switch a := aud.(type) {
	case string:
		return a == want
	case []any:
		return len(a) == 1 && a[0] == want
	}
	return false
}

// An HTTP tool with tokenExchange, against a real provider (zitadel/oidc):
// the upstream receives a token meant for itself whose subject is the caller — never the caller's own token —
// exchanged once and then reused; a caller with no JWT, or a refused
// exchange, gets an is_error result naming the upstream and no token.
func TestTokenExchangeToHTTPUpstream(t *testing.T) {
	t.Parallel()
	p := oidcop.Start(t, append([]oidcop.Client{{ID: "toolnexus", Secret: "exchange-secret-0001"}}, users...)...)
	up := &upstreamRecorder{}
	srv := httptest.NewServer(up)
	t.Cleanup(srv.Close)
	secretFile := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secretFile, []byte("exchange-secret-0001\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tool := func(name, secret string) string {
		return fmt.Sprintf(`{"name": %q, "url": %q, "method": "GET", "tokenExchange": {"tokenUrl": %q, "clientId": "toolnexus",
			"clientSecret": %q, "audience": "https://upstream.test", "scope": "read"}}`, name, srv.URL, p.TokenURL, secret)
	}
	cfg := fmt.Sprintf(`{"builtins": false, "skills": [], "http": [%s, %s],
		"auth": {"oidc": {"issuer": %q, "audience": %q},
			"groups": {"dev": {"tools": ["whoami", "whoami_bad"]}},
			"tokens": [{"name": "static-agent", "token": "static-agent-secret-01", "groups": ["dev"]}]}}`,
		tool("whoami", "${file:"+secretFile+"}"), tool("whoami_bad", "wrong-secret"), p.Issuer, resourceURL)
	f := serve(t, cfg, nil)
	reg := pb.NewRegistryServiceClient(f.dial(t))
	caller := tokenFor(t, p, "alice")
	call := func(tok, name string) *pb.ToolResult {
		resp, err := reg.Execute(bearerCtx(tok), &pb.ExecuteRequest{Name: name, Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{}`}})
		if err != nil {
			t.Fatalf("Execute: %v", err)
		}
		return resp.GetResult()
	}
	for range 2 {
		if r := call(caller, "whoami"); r.GetIsError() {
			t.Fatalf("whoami: %s", r.GetOutput())
		}
	}
	seen := up.headers()
	if len(seen) != 2 || seen[0] != seen[1] {
		t.Fatalf("upstream saw %d calls, want 2 with the same (cached) token", len(seen))
	}
	got, ok := strings.CutPrefix(seen[0], "Bearer ")
	if !ok || got == caller || strings.Contains(seen[0], caller) {
		t.Fatal("the upstream received the caller's own token (or none)")
	}
	c := oidcop.MustClaims(t, got)
	if c["sub"] != "alice" || !audIs(c["aud"], "https://upstream.test") || c["iss"] != p.Issuer {
		t.Fatalf("exchanged token claims %v, want sub alice, aud the upstream", c)
	}
	if x := p.Exchanges(); len(x) != 1 || x[0].Subject != "alice" || !slices.Equal(x[0].Audience, []string{"https://upstream.test"}) || !slices.Equal(x[0].Scopes, []string{"read"}) {
		t.Fatalf("exchanges at the provider: %+v, want one for alice", x)
	}

	// A static-token caller has no identity to exchange; a refused exchange
	// fails the call. Both name the upstream and show no token or secret.
	for _, c := range []struct{ tok, name, want string }{
		{"static-agent-secret-01", "whoami", "token exchange for http tool whoami failed: the caller did not authenticate with an identity-provider token"},
		{caller, "whoami_bad", "token exchange for http tool whoami_bad failed: the identity provider refused: 401 Unauthorized (invalid_client)"},
	} {
		r := call(c.tok, c.name)
		out := r.GetOutput()
		if !r.GetIsError() || !strings.Contains(out, c.want) || strings.Contains(out, caller) || strings.Contains(out, "secret-0001") || strings.Contains(out, "wrong-secret") {
			t.Errorf("%s: is_error=%v %q, want an error containing %q", c.name, r.GetIsError(), out, c.want)
		}
	}
	if n := len(up.headers()); n != 2 {
		t.Fatalf("the upstream was called %d times, want 2 (failed exchanges send nothing)", n)
	}
	if strings.Contains(f.logs.String(), caller) || strings.Contains(f.logs.String(), "exchange-secret-0001") {
		t.Fatal("a token or the client secret reached the log")
	}
}
