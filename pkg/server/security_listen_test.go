package server_test

import (
	"context"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/server"
)

// runMain runs server.Main in a child process (this test binary again)
// and returns its exit code and stderr: the real program, flags included.
func runMain(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestListenerRulesAtStart$")
	cmd.Env = append(os.Environ(), "TN_SEC_MAIN_ARGS="+strings.Join(args, " "))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, stderr.String()
}

// TestListenerRulesAtStart: a certificate is not a credential. A gRPC or
// /mcp listener beyond loopback with TLS but neither tokens nor a client
// CA would let anyone who reaches it run bash: the server refuses to start
// (exit 2) and says which key and what to do.
func TestListenerRulesAtStart(t *testing.T) {
	t.Parallel()
	if args := os.Getenv("TN_SEC_MAIN_ARGS"); args != "" {
		os.Exit(server.Main(strings.Fields(args)))
	}
	authority := newCA(t, "listen")
	cert, key, _ := authority.Issue(t, "server", x509.ExtKeyUsageServerAuth)
	tlsOnly := writeTemp(t, tlsConfigJSON(cert, key, ""))
	const fix = "configure auth.tokens, auth.oidc or server.tls.clientCA (mutual TLS), listen on 127.0.0.1, or pass --insecure if you really mean it\n"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--config", tlsOnly, "--listen", "0.0.0.0:0", "--metrics-listen", "off"},
			"config: server.listen: 0.0.0.0:0 is not a loopback address and server.tls without clientCA encrypts but does not authenticate, and neither auth.tokens nor auth.oidc is set, so anyone who reaches it runs tools; " + fix},
		{[]string{"--config", tlsOnly, "--listen", "127.0.0.1:0", "--mcp-listen", "0.0.0.0:0", "--metrics-listen", "off"},
			"config: server.mcp.listen: 0.0.0.0:0 is not a loopback address and server.tls without clientCA encrypts but does not authenticate, and neither auth.tokens nor auth.oidc is set, so anyone who reaches it runs tools; " + fix},
		{[]string{"--config", writeTemp(t, debugOnly), "--listen", "[::]:0", "--metrics-listen", "off"},
			"config: server.listen: [::]:0 is not a loopback address and none of auth.tokens, auth.oidc or mutual TLS is configured, so anyone who reaches it runs tools; " + fix},
	} {
		code, stderr := runMain(t, tc.args...)
		if code != server.ExitConfig || stderr != tc.want {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant exit 2 and:\n%s", tc.args, code, stderr, tc.want)
		}
	}

	// Mutual TLS on every interface: a client with a trusted server
	// certificate but none of its own is turned away before any RPC.
	mtls := serve(t, tlsConfigJSON(cert, key, authority.PEM), func(o *server.Options) { o.Listen = "0.0.0.0:0" })
	_, port, _ := net.SplitHostPort(mtls.srv.Addr().String())
	conn, err := grpc.NewClient("127.0.0.1:"+port, grpc.WithTransportCredentials(clientTLS(authority.Pool)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = pb.NewRegistryServiceClient(conn).Execute(ctx, &pb.ExecuteRequest{Name: "debug_echo", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{}`}})
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("client without a certificate against mutual TLS on 0.0.0.0: %v, want Unavailable", err)
	}
}

// /metrics is read-only and may be public; the startup line says so.
func TestPublicMetricsAreNamedInTheStartupLine(t *testing.T) {
	t.Parallel()
	s := serve(t, debugOnly, func(o *server.Options) { o.MetricsListen = "0.0.0.0:0" })
	_, port, _ := net.SplitHostPort(s.srv.MetricsAddr().String())
	want := fmt.Sprintf(`beyond_loopback="metrics [::]:%s (open: /metrics and /healthz are public, read-only)"`, port)
	if line := startupLine(t, s); !strings.Contains(line, want) {
		t.Fatalf("startup line lacks %s:\n%s", want, line)
	}
	// Everything on loopback says so too.
	if line := startupLine(t, serve(t, debugOnly, nil)); !strings.Contains(line, "beyond_loopback=none") {
		t.Fatalf("startup line lacks beyond_loopback=none:\n%s", line)
	}
}

// startupLine waits for Serve's "toolnexus serving" line (Serve runs in
// the background; the deadline only bounds a failing test).
func startupLine(t *testing.T, s *served) string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		for _, line := range strings.Split(s.logs.String(), "\n") {
			if strings.Contains(line, `msg="toolnexus serving"`) {
				return line
			}
		}
	}
	t.Fatal("no startup line")
	return ""
}

// TestReloadCannotOpenThePublicSocket is the reload attack: the server
// listens on every interface with tokens; the config file is rewritten
// without tokens and with a loopback listen address, which a check of the
// new config alone would accept although the socket stays public. The
// reload is refused against the address actually bound: the old config
// keeps serving (a caller without a token is still turned away), the
// reason is in the Reload reply and the log, and the error is counted.
func TestReloadCannotOpenThePublicSocket(t *testing.T) {
	t.Setenv("TN_SEC_ADMIN", adminSecret)
	withTokens := `{"debug": true, "builtins": false, "skills": [], "auth": {"tokens": [{"name": "ops", "token": "${TN_SEC_ADMIN}", "admin": true}]}}`
	s := serve(t, withTokens, func(o *server.Options) { o.Listen = "0.0.0.0:0" })
	_, port, _ := net.SplitHostPort(s.srv.Addr().String())
	conn, err := grpc.NewClient("127.0.0.1:"+port, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	s.rewrite(t, `{"debug": true, "builtins": false, "skills": [], "server": {"listen": "127.0.0.1:50051"}}`)

	_, err = pb.NewSourceServiceClient(conn).Reload(bearer(adminSecret), &pb.ReloadRequest{})
	reason := "config: server.listen: [::]:" + port + " is not a loopback address and none of auth.tokens, auth.oidc or mutual TLS is configured, so anyone who reaches it runs tools; " +
		"configure auth.tokens, auth.oidc or server.tls.clientCA (mutual TLS), listen on 127.0.0.1, or pass --insecure if you really mean it"
	if status.Code(err) != codes.FailedPrecondition || status.Convert(err).Message() != "reload rejected, the previous config keeps serving: "+reason {
		t.Fatalf("Reload: %v\nwant FailedPrecondition: reload rejected, the previous config keeps serving: %s", err, reason)
	}
	if _, err := pb.NewRegistryServiceClient(conn).Execute(context.Background(), &pb.ExecuteRequest{Name: "debug_echo"}); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("Execute without a token after the refused reload: %v, want Unauthenticated (the old config keeps serving)", err)
	}
	if !strings.Contains(s.logs.String(), "reload rejected; the previous config keeps serving") || !strings.Contains(s.logs.String(), "[::]:"+port+" is not a loopback address") {
		t.Fatalf("the log lacks the reason:\n%s", s.logs.String())
	}
	if line := testutil.MetricLine(s.scrape(t), "toolnexus_reloads_total", `result="error"`); !strings.HasSuffix(line, " 1") {
		t.Fatalf("toolnexus_reloads_total{result=\"error\"}: %q, want 1", line)
	}
}
