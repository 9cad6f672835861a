package server_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/testutil"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/pkg/server"
)

// newCA is the shared throwaway certificate authority.
func newCA(t *testing.T, name string) *testutil.CA { return testutil.NewCA(t, name) }

func tlsConfigJSON(cert, key, clientCA string) string {
	tlsKeys := fmt.Sprintf(`"cert": %q, "key": %q`, cert, key)
	if clientCA != "" {
		tlsKeys += fmt.Sprintf(`, "clientCA": %q`, clientCA)
	}
	return `{"debug": true, "builtins": false, "skills": [], "server": {"tls": {` + tlsKeys + `}}}`
}

// try makes one call on a fresh connection with the given transport.
func try(t *testing.T, s *served, creds credentials.TransportCredentials) error {
	t.Helper()
	conn, err := grpc.NewClient(s.srv.Addr().String(), grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := pb.NewRegistryServiceClient(conn).Execute(ctx, &pb.ExecuteRequest{Name: "debug_echo", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{"over":"tls"}`}})
	if err == nil && resp.GetResult().GetOutput() != `{"over":"tls"}` {
		t.Fatalf("round trip returned %v", resp.GetResult())
	}
	return err
}

func clientTLS(roots *x509.CertPool, certs ...tls.Certificate) credentials.TransportCredentials {
	return credentials.NewTLS(&tls.Config{RootCAs: roots, Certificates: certs, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12})
}

func TestTLSRoundTrip(t *testing.T) {
	t.Parallel()
	authority := newCA(t, "tn-test")
	cert, key, _ := authority.Issue(t, "server", x509.ExtKeyUsageServerAuth)
	s := serve(t, tlsConfigJSON(cert, key, ""), nil)

	if err := try(t, s, clientTLS(authority.Pool)); err != nil {
		t.Fatalf("TLS client: %v", err)
	}
	if err := try(t, s, insecure.NewCredentials()); status.Code(err) != codes.Unavailable {
		t.Fatalf("plaintext client against TLS: %v, want Unavailable", err)
	}
	if err := try(t, s, clientTLS(newCA(t, "stranger").Pool)); status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("client trusting another CA: %v", err)
	}
}

func TestMutualTLS(t *testing.T) {
	t.Parallel()
	authority := newCA(t, "tn-mtls")
	cert, key, _ := authority.Issue(t, "server", x509.ExtKeyUsageServerAuth)
	_, _, client := authority.Issue(t, "agent", x509.ExtKeyUsageClientAuth)
	s := serve(t, tlsConfigJSON(cert, key, authority.PEM), nil)

	if err := try(t, s, clientTLS(authority.Pool, client)); err != nil {
		t.Fatalf("client with a certificate: %v", err)
	}
	if err := try(t, s, clientTLS(authority.Pool)); err == nil {
		t.Fatal("a client without a certificate was served under mTLS")
	}
	other := newCA(t, "other")
	_, _, foreign := other.Issue(t, "intruder", x509.ExtKeyUsageClientAuth)
	if err := try(t, s, clientTLS(authority.Pool, foreign)); err == nil {
		t.Fatal("a client certificate from an untrusted CA was accepted")
	}
}

func TestTLSCertificatesSwapOnReload(t *testing.T) {
	t.Parallel()
	first := newCA(t, "first")
	cert1, key1, _ := first.Issue(t, "server1", x509.ExtKeyUsageServerAuth)
	s := serve(t, tlsConfigJSON(cert1, key1, ""), nil)
	if err := try(t, s, clientTLS(first.Pool)); err != nil {
		t.Fatal(err)
	}
	// A connection made before the swap keeps working after it.
	kept, err := grpc.NewClient(s.srv.Addr().String(), grpc.WithTransportCredentials(clientTLS(first.Pool)))
	if err != nil {
		t.Fatal(err)
	}
	defer kept.Close()
	keptReg := pb.NewRegistryServiceClient(kept)
	if _, err := keptReg.ListTools(context.Background(), &pb.ListToolsRequest{}); err != nil {
		t.Fatal(err)
	}

	second := newCA(t, "second")
	cert2, key2, _ := second.Issue(t, "server2", x509.ExtKeyUsageServerAuth)
	_, _, client2 := second.Issue(t, "agent2", x509.ExtKeyUsageClientAuth)
	s.rewrite(t, tlsConfigJSON(cert2, key2, second.PEM))
	if _, err := s.srv.Reload(context.Background()); err != nil {
		t.Fatalf("reload with new certificates: %v", err)
	}
	if err := try(t, s, clientTLS(second.Pool, client2)); err != nil {
		t.Fatalf("new certificate, new client CA: %v", err)
	}
	if err := try(t, s, clientTLS(first.Pool, client2)); err == nil {
		t.Fatal("the old server certificate is still served after the swap")
	}
	if err := try(t, s, clientTLS(second.Pool)); err == nil {
		t.Fatal("mTLS turned on by reload but a client without a certificate was served")
	}
	if _, err := keptReg.ListTools(context.Background(), &pb.ListToolsRequest{}); err != nil {
		t.Fatalf("connection from before the swap: %v", err)
	}

	// Broken certificates and turning TLS off are rejected; the current
	// certificates keep serving.
	s.rewrite(t, tlsConfigJSON(filepath.Join(t.TempDir(), "missing.pem"), key2, ""))
	if _, err := s.srv.Reload(context.Background()); err == nil || !strings.Contains(err.Error(), "config: server.tls: load cert") {
		t.Fatalf("missing certificate: %v", err)
	}
	s.rewrite(t, debugOnly)
	if _, err := s.srv.Reload(context.Background()); err == nil || !strings.Contains(err.Error(), "turning TLS on or off needs a restart") {
		t.Fatalf("TLS off by reload: %v", err)
	}
	if err := try(t, s, clientTLS(second.Pool, client2)); err != nil {
		t.Fatalf("after rejected reloads: %v", err)
	}
}

func TestTLSConfigErrorsAtStart(t *testing.T) {
	t.Parallel()
	authority := newCA(t, "start")
	cert, key, _ := authority.Issue(t, "server", x509.ExtKeyUsageServerAuth)
	notPEM := filepath.Join(t.TempDir(), "ca.txt")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ cfg, want string }{
		{tlsConfigJSON(cert, key+".missing", ""), "config: server.tls: load cert"},
		{tlsConfigJSON(cert, key, notPEM), "config: server.tls: clientCA " + notPEM + " holds no PEM certificate"},
		{tlsConfigJSON(key, cert, ""), "config: server.tls: load cert"},
	} {
		_, err := server.New(server.Options{ConfigPath: writeTemp(t, c.cfg), Listen: "127.0.0.1:0", MetricsListen: "-", Workspace: t.TempDir(), Logger: quiet})
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.cfg, err, c.want)
		}
	}
	// TLS alone does not authenticate anyone: not enough beyond loopback.
	// Mutual TLS is (security_listen_test.go has the attack).
	_, err := server.New(server.Options{ConfigPath: writeTemp(t, tlsConfigJSON(cert, key, "")), Listen: "0.0.0.0:0", MetricsListen: "-", Workspace: t.TempDir(), Logger: quiet})
	var ce *server.ConfigError
	if !errors.As(err, &ce) || ce.Key != "server.listen" {
		t.Fatalf("TLS without clientCA on 0.0.0.0: %v, want a server.listen config error", err)
	}
	srv, err := server.New(server.Options{ConfigPath: writeTemp(t, tlsConfigJSON(cert, key, authority.PEM)), Listen: "0.0.0.0:0", MetricsListen: "-", Workspace: t.TempDir(), Logger: quiet})
	if err != nil {
		t.Fatalf("mutual TLS on 0.0.0.0: %v", err)
	}
	_ = srv.Close(context.Background())
}
