package sandbox_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/toolnexus/toolnexus/internal/egress"
	"github.com/toolnexus/toolnexus/internal/sandbox"
)

// names is the test resolver: the proxy resolves through it, so local
// servers get names without touching /etc/hosts or DNS.
type names map[string][]netip.Addr

func (n names) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := n[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

var loopback = []netip.Addr{netip.MustParseAddr("127.0.0.1")}

// audited collects the proxy's records.
type audited struct {
	mu   sync.Mutex
	recs []egress.Record
}

func (a *audited) add(r egress.Record) { a.mu.Lock(); a.recs = append(a.recs, r); a.mu.Unlock() }
func (a *audited) all() []egress.Record {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]egress.Record(nil), a.recs...)
}

func egressProxy(t *testing.T, allow, deny []string, res names, a *audited) *egress.Proxy {
	t.Helper()
	rules, err := egress.ParseRules("sandbox.egress", allow, deny)
	if err != nil {
		t.Fatal(err)
	}
	cfg := egress.Config{Rules: rules, Resolver: res, Limits: egress.DefaultLimits}
	if a != nil {
		cfg.Audit = a.add
	}
	return egress.New(cfg)
}

func needEgress(t *testing.T) *sandbox.Sandbox {
	s := box(t)
	need(t, s, sandbox.LayerUserNS, sandbox.LayerPIDNS, sandbox.LayerNetNS)
	return s
}

func TestEgressPlainHTTPThroughTheProxy(t *testing.T) {
	s := needEgress(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s", r.Host)
	}))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	a := &audited{}
	f := newFixture(t)
	f.policy.Egress = egressProxy(t, []string{"web.test"}, nil, names{"web.test": loopback}, a).Bind(egress.Call{Principal: "alice", Session: "s1", Tool: "bash"})
	out, code := f.sh(t, s, fmt.Sprintf("curl -sS http://web.test:%d/x", port))
	if code != 0 || !strings.Contains(out, "hello from web.test") {
		t.Fatalf("curl: %d %s", code, out)
	}
	t.Log(a.all())
}
