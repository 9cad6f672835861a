package main

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/internal/testutil/oauthmcp"
	"github.com/toolnexus/toolnexus/internal/testutil/oidcop"
)

// `toolnexus connect` prints the login URL on a line of its own, waits
// while a browser logs in through the server's web listener, and prints
// "connected"; `connections` then lists it (never a token), and
// `disconnect` forgets and revokes it.
func TestConnectConnectionsDisconnect(t *testing.T) {
	op := oidcop.Start(t)
	up := oauthmcp.Start(t, op)
	srv := startServer(t, `{"builtins": false, "skills": [], "server": {"web": {"listen": "127.0.0.1:0"}},
		"mcpServers": {"tickets": {"url": "`+up.URL+`", "oauth": {}, "timeout": 10000}}}`)
	pr, pw := io.Pipe()
	var stderr strings.Builder
	code := make(chan int, 1)
	go func() {
		code <- runContext(context.Background(), strings.NewReader(""), []string{"--addr", srv.Addr().String(), "connect", "tickets"}, pw, &stderr)
		pw.Close()
	}()
	out := bufio.NewReader(pr)
	url, err := out.ReadString('\n')
	if err != nil || !strings.HasPrefix(url, op.Issuer+"/authorize?") {
		t.Fatalf("first line %q (%v), want the authorization URL alone", url, err)
	}
	if status, page := oidcop.NewBrowser().Login(t, strings.TrimSpace(url), "ops-admin", nil); status != 200 {
		t.Fatalf("login: %d %s", status, page)
	}
	rest, _ := io.ReadAll(out)
	if c := <-code; c != 0 || string(rest) != "connected\n" {
		t.Fatalf("exit %d, then %q; stderr %s", c, rest, stderr.String())
	}
	if !strings.Contains(stderr.String(), "Open this URL in a browser and log in to tickets") {
		t.Errorf("stderr says nothing of what to do: %s", stderr.String())
	}
	list := against(t, srv, "connections").want(t, 0).stdout
	if !strings.Contains(list, "tickets") || !strings.Contains(list, "LISTS-TOOLS") || strings.Contains(list, "eyJ") {
		t.Fatalf("connections:\n%s", list)
	}
	if got := against(t, srv, "disconnect", "tickets").want(t, 0).stdout; !strings.Contains(got, "disconnected from tickets (revoked") {
		t.Fatalf("disconnect: %s", got)
	}
	if got := against(t, srv, "connections").want(t, 0).stdout; got != "No connections.\n" {
		t.Fatalf("after disconnect: %s", got)
	}
	r := against(t, srv, "connect", "nope").want(t, 1)
	if !strings.Contains(r.stderr, `"nope" is not an MCP server with an "oauth" section`) {
		t.Fatalf("unknown server: %s", r.stderr)
	}
	against(t, srv, "disconnect").want(t, 2)
}
