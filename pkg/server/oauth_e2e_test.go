package server_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"

	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/internal/testutil/oauthmcp"
	"github.com/toolnexus/toolnexus/internal/testutil/oidcop"
	"github.com/toolnexus/toolnexus/pkg/server"
)

// Each caller's own OAuth connection, through whole servers: a real
// provider (zitadel's OP with the browser flow and dynamic registration),
// a real MCP server that checks its tokens' audience (go-sdk auth
// middleware, RFC 9728), logins through the real callback on the web
// listener, over gRPC as clients make them.

const (
	oauthOps   = "token-of-ops-admin-0123456789"
	oauthAlice = "token-of-alice-0123456789abc"
	oauthBob   = "token-of-bob-0123456789abcdef"
)

// oauthConfig is a server with the MCP server "tickets" under oauth and
// three callers; extra goes in the top-level object.
func oauthConfig(mcpURL, extra string) string {
	return fmt.Sprintf(`{"builtins": false, "skills": [], %s
  "auth": {"tokens": [{"name": "ops", "token": %q, "admin": true}, {"name": "alice", "token": %q}, {"name": "bob", "token": %q}]},
  "audit": {"arguments": true},
  "mcpServers": {"tickets": {"url": %q, "oauth": {}, "timeout": 10000, "restart": {"initialBackoff": 10, "maxBackoff": 200}}}}`,
		extra, oauthOps, oauthAlice, oauthBob, mcpURL)
}

// vaultKeyFile writes a fresh vault key.
func vaultKeyFile(t *testing.T) string {
	t.Helper()
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	p := filepath.Join(t.TempDir(), "vault.key")
	if err := os.WriteFile(p, []byte(base64.StdEncoding.EncodeToString(b)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// oauthReplica launches a server of cfg with its web listener on web and
// its logs (debug) and audit lines in logs.
func oauthReplica(t *testing.T, cfg, web string, logs *testutil.Buffer) (*server.Server, *grpc.ClientConn, func()) {
	t.Helper()
	srv, _, stop := launch(t, cfg, func(o *server.Options) {
		o.WebListen = web
		o.MetricsListen = "127.0.0.1:0"
		o.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		o.AuditOutput = logs
	})
	return srv, dialGRPC(t, srv.Addr().String()), stop
}

// waitSourceState waits until ListSources shows the MCP server in state.
func waitSourceState(t *testing.T, conn *grpc.ClientConn, name, state string) *pb.Source {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var last *pb.Source
	for time.Now().Before(deadline) {
		resp, err := pb.NewSourceServiceClient(conn).ListSources(bearer(oauthOps), &pb.ListSourcesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range resp.GetSources() {
			if s.GetKind() == "mcp" && s.GetName() == name {
				last = s
				if s.GetStatus() == state {
					return s
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("source %s never became %s: %v", name, state, last)
	return nil
}

// connectAsAdmin is `toolnexus connect NAME` as ops: the URL comes
// first, the browser logs in as user, then the stream says connected.
func connectAsAdmin(t *testing.T, conn *grpc.ClientConn, name, user string, browser *oidcop.Browser) {
	t.Helper()
	ctx, cancel := context.WithTimeout(bearer(oauthOps), 20*time.Second)
	defer cancel()
	stream, err := pb.NewConnectionServiceClient(conn).Connect(ctx, &pb.ConnectRequest{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := stream.Recv()
	if err != nil || ev.GetAuthorizationUrl() == "" {
		t.Fatalf("first event: %v %v", ev, err)
	}
	if status, page := browser.Login(t, ev.GetAuthorizationUrl(), user, nil); status != 200 {
		t.Fatalf("login: %d %s", status, page)
	}
	ev, err = stream.Recv()
	if err != nil || ev.GetConnected().GetUpstream() != name || !ev.GetConnected().GetListsTools() {
		t.Fatalf("second event: %v %v", ev, err)
	}
}

// oauthExec calls name as the caller with token, resuming answer when set.
func oauthExec(t *testing.T, conn *grpc.ClientConn, token, name string, answer *pb.Answer) *pb.ToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(bearer(token), 20*time.Second)
	defer cancel()
	resp, err := pb.NewRegistryServiceClient(conn).Execute(ctx, &pb.ExecuteRequest{Name: name,
		Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: "{}"}, Answer: answer})
	if err != nil {
		t.Fatalf("Execute %s: %v", name, err)
	}
	return resp.GetResult()
}

// oauthLogin takes a caller from its PENDING authorization (asked on
// conn) through the browser, logging in as user (the callback lands where
// the redirect URI points), to the resumed call's result, answered on
// conn.
func oauthLogin(t *testing.T, conn *grpc.ClientConn, token, user string, browser *oidcop.Browser) *pb.ToolResult {
	t.Helper()
	res := oauthExec(t, conn, token, "tickets_whoami", nil)
	p := res.GetPending()
	if res.GetOutcome() != pb.Outcome_OUTCOME_PENDING || p.GetKind() != "authorization" || !strings.Contains(res.GetOutput(), p.GetUrl()) {
		t.Fatalf("%s without a connection: %v", user, res)
	}
	if status, page := browser.Login(t, p.GetUrl(), user, nil); status != 200 || !strings.Contains(page, "Connected") {
		t.Fatalf("%s's login: %d %s", user, status, page)
	}
	return oauthExec(t, conn, token, "tickets_whoami", &pb.Answer{Id: p.GetId(), Ok: true})
}

// noSecrets fails when any token the provider issued shows in text.
func noSecrets(t *testing.T, where, text string, op *oidcop.Provider, up *oauthmcp.Server) {
	t.Helper()
	secrets := append(up.Tokens(), op.RefreshTokens()...)
	if len(secrets) == 0 {
		t.Fatal("no token was issued: nothing to look for")
	}
	for _, s := range secrets {
		if strings.Contains(text, s) {
			t.Errorf("%s shows a token", where)
			return
		}
	}
}

// The admin connects (the source was unauthorized), callers each log in
// and act as themselves, a restart keeps every connection (file vault),
// the vault's files hold no token text, and disconnect forgets one.
func TestOAuthConnectionsThroughTheServer(t *testing.T) {
	t.Parallel()
	op := oidcop.Start(t)
	up := oauthmcp.Start(t, op, "mcp:tools")
	vaultDir := filepath.Join(t.TempDir(), "vault")
	cfg := oauthConfig(up.URL, fmt.Sprintf(`"credentials": {"dir": %q, "keyFile": %q},`, vaultDir, vaultKeyFile(t)))
	web := freeAddr(t)
	logs := &testutil.Buffer{}
	browser := oidcop.NewBrowser()
	srv, conn, stop := oauthReplica(t, cfg, web, logs)

	st := waitSourceState(t, conn, "tickets", "unauthorized")
	if !strings.Contains(st.GetError(), "toolnexus connect tickets") {
		t.Fatalf("unauthorized status without the fix: %v", st)
	}
	connectAsAdmin(t, conn, "tickets", "ops-admin", browser)
	waitSourceState(t, conn, "tickets", "connected")
	if res := oauthLogin(t, conn, oauthAlice, "alice", browser); res.GetOutput() != "you are alice" {
		t.Fatalf("alice's resumed call: %v", res)
	}
	if res := oauthExec(t, conn, oauthBob, "tickets_whoami", nil); res.GetOutcome() != pb.Outcome_OUTCOME_PENDING {
		t.Fatalf("bob acted without logging in: %v", res)
	}
	resp, err := pb.NewConnectionServiceClient(conn).ListConnections(bearer(oauthAlice), &pb.ListConnectionsRequest{})
	if err != nil || len(resp.GetConnections()) != 1 || resp.GetConnections()[0].GetPrincipal() != "alice" {
		t.Fatalf("alice's connections: %v %v", resp, err)
	}
	metrics := scrapeAddr(t, srv.MetricsAddr().String())

	stop()
	files := readFiles(t, vaultDir)
	noSecrets(t, "the vault's files", files, op, up)
	noSecrets(t, "the logs and audit lines", logs.String(), op, up)
	noSecrets(t, "the metrics", metrics, op, up)

	_, conn, _ = oauthReplica(t, cfg, web, logs)
	waitSourceState(t, conn, "tickets", "connected")
	if res := oauthExec(t, conn, oauthAlice, "tickets_whoami", nil); res.GetOutput() != "you are alice" {
		t.Fatalf("alice after a restart: %v", res)
	}
	if _, err := pb.NewConnectionServiceClient(conn).Disconnect(bearer(oauthAlice), &pb.DisconnectRequest{Name: "tickets"}); err != nil {
		t.Fatal(err)
	}
	if res := oauthExec(t, conn, oauthAlice, "tickets_whoami", nil); res.GetOutcome() != pb.Outcome_OUTCOME_PENDING {
		t.Fatalf("alice after disconnect: %v", res)
	}
	if up.Calls("ops-admin") != 0 || up.Calls("bob") != 0 || up.Calls("alice") != 2 {
		t.Fatalf("calls by subject: alice %d, bob %d, admin %d", up.Calls("alice"), up.Calls("bob"), up.Calls("ops-admin"))
	}
}

func scrapeAddr(t *testing.T, addr string) string {
	t.Helper()
	_, body := oidcop.NewBrowser().Get(t, "http://"+addr+"/metrics")
	return body
}

// readFiles is every file's content under dir.
func readFiles(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			data, _ := os.ReadFile(p)
			b.Write(data)
			b.WriteString(filepath.Base(p))
		}
		return nil
	})
	if b.Len() == 0 {
		t.Fatal("the vault directory is empty")
	}
	return b.String()
}

// Two replicas sharing Redis: the admin connects through one while the
// login's callback lands on the other (every replica's public URL is the
// same: here, the second's listener), and both list the tools; a
// caller's login started on one completes through the other, its answer
// and its next calls run on either, acting as the caller. Redis holds no
// token text.
func TestOAuthTwoReplicasShareConnections(t *testing.T) {
	t.Parallel()
	rs := testutil.StartRedis(t)
	op := oidcop.Start(t)
	up := oauthmcp.Start(t, op, "mcp:tools")
	webA, webB := freeAddr(t), freeAddr(t)
	cfg := oauthConfig(up.URL, fmt.Sprintf(`"credentials": {"keyFile": %q}, "cluster": {"name": "test", "redis": {"url": %q, "timeout": 2000}},
	  "server": {"web": {"publicUrl": "http://%s"}},`, vaultKeyFile(t), rs.URL, webB))
	logs := &testutil.Buffer{}
	browser := oidcop.NewBrowser()
	_, a, _ := oauthReplica(t, cfg, webA, logs)
	_, b, _ := oauthReplica(t, cfg, webB, logs)

	connectAsAdmin(t, a, "tickets", "ops-admin", browser)
	waitSourceState(t, a, "tickets", "connected")
	waitSourceState(t, b, "tickets", "connected")
	if res := oauthLogin(t, a, oauthAlice, "alice", browser); res.GetOutput() != "you are alice" {
		t.Fatalf("alice answered on replica a after the callback on b: %v", res)
	}
	for i, conn := range []*grpc.ClientConn{b, a, b} {
		if res := oauthExec(t, conn, oauthAlice, "tickets_whoami", nil); res.GetOutput() != "you are alice" {
			t.Fatalf("call %d: %v", i, res)
		}
	}
	if res := oauthExec(t, b, oauthBob, "tickets_whoami", nil); res.GetOutcome() != pb.Outcome_OUTCOME_PENDING {
		t.Fatalf("bob acted without logging in: %v", res)
	}
	noSecrets(t, "Redis", redisDump(t, rs), op, up)
	noSecrets(t, "the logs and audit lines", logs.String(), op, up)
}

// redisDump is every string, set and hash value in Redis.
func redisDump(t *testing.T, rs *testutil.RedisServer) string {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: rs.Addr})
	defer c.Close()
	ctx := context.Background()
	keys, err := c.Keys(ctx, "*").Result()
	if err != nil || len(keys) == 0 {
		t.Fatalf("redis keys: %v %v", keys, err)
	}
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		switch c.Type(ctx, k).Val() {
		case "string":
			b.WriteString(c.Get(ctx, k).Val())
		case "set":
			b.WriteString(strings.Join(c.SMembers(ctx, k).Val(), " "))
		case "hash":
			fmt.Fprint(&b, c.HGetAll(ctx, k).Val())
		}
	}
	return b.String()
}

// What a start and --check refuse or warn about: an oauth server with no
// web listener to end a login; a web listener beyond loopback with
// neither TLS nor an https public URL; a key file that does not load; no
// credentials (connections in memory).
func TestOAuthCheckAndExposure(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(cfg string) string {
		p := filepath.Join(dir, fmt.Sprintf("c%d.json", time.Now().UnixNano()))
		if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bad := filepath.Join(dir, "bad.key")
	_ = os.WriteFile(bad, []byte("not a key\n"), 0o600)
	const srv = `"mcpServers": {"gh": {"url": "https://gh.example.com/mcp", "oauth": {}}}`
	for _, c := range []struct {
		cfg, web, key, want string
	}{
		{`{"builtins": false, "skills": [], ` + srv + `}`, "", "mcpServers.gh.oauth", "--web-listen"},
		{`{"builtins": false, "skills": [], ` + srv + `}`, "0.0.0.0:0", "server.web.listen", "neither server.tls nor an https server.web.publicUrl"},
		{`{"builtins": false, "skills": [], "credentials": {"dir": "v", "keyFile": "` + bad + `"}, ` + srv + `}`, "127.0.0.1:0", "credentials.keyFile", "line 1 is not a 32-byte key"},
	} {
		_, err := server.CheckReport(server.Options{ConfigPath: write(c.cfg), WebListen: c.web})
		var ce *server.ConfigError
		if !errors.As(err, &ce) || ce.Key != c.key || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s (web %q): %v, want %s: …%s…", c.cfg, c.web, err, c.key, c.want)
		}
	}
	ok, err := server.CheckReport(server.Options{ConfigPath: write(`{"builtins": false, "skills": [], "server": {"web": {"publicUrl": "https://tools.example.com"}}, ` + srv + `}`),
		WebListen: "0.0.0.0:0"})
	if err != nil || !slices.ContainsFunc(ok.Warnings, func(w string) bool { return strings.Contains(w, "credentials is not set") }) {
		t.Fatalf("behind an https proxy, no credentials: %v, warnings %v", err, ok.Warnings)
	}
	summary := strings.Join(ok.Summary, "\n")
	if !strings.Contains(summary, "web 0.0.0.0:0 (public https://tools.example.com)") || !strings.Contains(summary, "mcp gh (remote, oauth)") {
		t.Errorf("summary:\n%s", summary)
	}
}
