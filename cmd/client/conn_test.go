package main

import (
	"crypto/x509"
	"fmt"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"net"
	"path/filepath"
	"strings"
	"testing"
)

const secretToken = "s3cret-token-for-tests"

func TestToken(t *testing.T) {
	t.Setenv("CLIENT_TEST_TOKEN", secretToken)
	srv := startServer(t, `{"debug": true, "builtins": false, "skills": [],
		"auth": {"tokens": [{"name": "agent", "token": "${CLIENT_TEST_TOKEN}", "tools": ["debug_echo"]}]}}`)

	r := against(t, srv, "list").want(t, 1)
	if !strings.Contains(r.stderr, "toolnexus list: Unauthenticated: missing bearer token") {
		t.Fatalf("no token: %q", r.stderr)
	}

	r = against(t, srv, "--token", "wrong-token-value", "list").want(t, 1)
	if !strings.Contains(r.stderr, "Unauthenticated: invalid bearer token") || strings.Contains(r.stderr, "wrong-token-value") {
		t.Fatalf("wrong token: %q", r.stderr)
	}

	// The token's allowlist shows: only debug_echo.
	out := against(t, srv, "--token", secretToken, "list").want(t, 0).stdout
	if got := tableNames(t, out); fmt.Sprint(got) != "[debug_echo]" {
		t.Fatalf("list with token = %v", got)
	}

	// TOOLNEXUS_TOKEN works the same (a trailing newline from a file is dropped).
	t.Setenv("TOOLNEXUS_TOKEN", secretToken+"\n")
	r = against(t, srv, "exec", "debug_echo", "--args", `{"x":1}`).want(t, 0)
	if r.stdout != `{"x":1}`+"\n" {
		t.Fatalf("exec with env token: %q", r.stdout)
	}
	// Health needs no token; probes carry no secrets.
	t.Setenv("TOOLNEXUS_TOKEN", "")
	against(t, srv, "health").want(t, 0)
}

func TestAddrFromEnvAndDNS(t *testing.T) {
	srv := startServer(t, debugOnly)
	t.Setenv("TOOLNEXUS_ADDR", srv.Addr().String())
	if out := runCLI(t, "", "health").want(t, 0).stdout; out != "SERVING\n" {
		t.Fatalf("health via TOOLNEXUS_ADDR: %q", out)
	}
	// A dns:/// target with round-robin balancing reaches the same server.
	_, port, _ := net.SplitHostPort(srv.Addr().String())
	r := runCLI(t, "", "--addr", "dns:///127.0.0.1:"+port, "exec", "debug_echo", "--args", `{"via":"dns"}`).want(t, 0)
	if r.stdout != `{"via":"dns"}`+"\n" {
		t.Fatalf("dns target: %q", r.stdout)
	}
}

func TestIsDNSTarget(t *testing.T) {
	for target, want := range map[string]bool{
		"127.0.0.1:50051":            true,
		"localhost:50051":            true,
		"[::1]:50051":                true,
		"dns:///toolnexus:50051":     true,
		"dns://8.8.8.8/toolnexus:53": true,
		"unix:///tmp/toolnexus.sock": false,
		"passthrough:///10.0.0.1:1":  false,
	} {
		if got := isDNSTarget(target); got != want {
			t.Errorf("isDNSTarget(%q) = %v, want %v", target, got, want)
		}
	}
}

func TestDialOptionsServiceConfig(t *testing.T) {
	// The round_robin service config is the one extra option a dns target gets.
	opts := func(addr string) int {
		g := globals{addr: addr}
		o, err := g.dialOptions()
		if err != nil {
			t.Fatal(err)
		}
		return len(o)
	}
	if d, u := opts("dns:///h:1"), opts("unix:///tmp/s"); d != u+1 {
		t.Errorf("dns target has %d options, unix %d: want exactly one more", d, u)
	}
}

// pki is a throwaway CA with a server certificate for 127.0.0.1 and a
// client certificate, written as PEM files.
type pki struct {
	ca, serverCert, serverKey, clientCert, clientKey string
}

func newPKI(t *testing.T) pki {
	t.Helper()
	authority := testutil.NewCA(t, "test CA")
	p := pki{ca: authority.PEM}
	p.serverCert, p.serverKey, _ = authority.Issue(t, "server", x509.ExtKeyUsageServerAuth)
	p.clientCert, p.clientKey, _ = authority.Issue(t, "client", x509.ExtKeyUsageClientAuth)
	return p
}

func TestMutualTLS(t *testing.T) {
	p := newPKI(t)
	srv := startServer(t, fmt.Sprintf(`{"debug": true, "builtins": false, "skills": [],
		"server": {"tls": {"cert": %q, "key": %q, "clientCA": %q}}}`, p.serverCert, p.serverKey, p.ca))

	out := against(t, srv, "--ca", p.ca, "--cert", p.clientCert, "--key", p.clientKey, "list", "--source", "debug").want(t, 0).stdout
	if got := tableNames(t, out); len(got) != 4 {
		t.Fatalf("list over mTLS = %v", got)
	}
	// Without a client certificate, or in plaintext, the call fails: exit 1.
	against(t, srv, "--ca", p.ca, "health").want(t, 1)
	against(t, srv, "health").want(t, 1)
	// Without --ca the test CA is unknown to the system roots.
	against(t, srv, "--tls", "--cert", p.clientCert, "--key", p.clientKey, "health").want(t, 1)
}

func TestTLSFlagErrorsAreUsageErrors(t *testing.T) {
	p := newPKI(t)
	for name, args := range map[string][]string{
		"cert without key":    {"--cert", p.clientCert, "health"},
		"key without cert":    {"--key", p.clientKey, "health"},
		"missing ca file":     {"--ca", filepath.Join(t.TempDir(), "nope.pem"), "health"},
		"ca is not PEM":       {"--ca", p.clientKey, "health"},
		"server-name w/o tls": {"--server-name", "x", "health"},
		"bad key pair":        {"--cert", p.clientCert, "--key", p.serverKey, "health"},
	} {
		t.Run(name, func(t *testing.T) {
			r := runCLI(t, "", append([]string{"--addr", "127.0.0.1:1"}, args...)...).want(t, 2)
			if !strings.HasPrefix(r.stderr, "toolnexus health: ") {
				t.Fatalf("stderr %q", r.stderr)
			}
		})
	}
}
