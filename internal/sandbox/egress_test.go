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

// public is what the tests' names resolve to: a public address (TEST-NET-3),
// which the proxy's dialler takes to the local servers on 127.0.0.1 — no
// name ever reaches loopback itself (docs/egress.md, "The decision").
var public = []netip.Addr{netip.MustParseAddr("203.0.113.1")}

// toLoopback dials the port of a checked address on 127.0.0.1, where every
// test server listens.
func toLoopback(ctx context.Context, a netip.AddrPort) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "tcp", netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), a.Port()).String())
}

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
	cfg := egress.Config{Rules: rules, Resolver: res, Limits: egress.DefaultLimits, Dial: toLoopback}
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
	f.policy.Egress = egressProxy(t, []string{"web.test"}, nil, names{"web.test": public}, a).Bind(egress.Call{Principal: "alice", Session: "s1", Tool: "bash"})
	out, code := f.sh(t, s, fmt.Sprintf("curl -sS http://web.test:%d/x", port))
	if code != 0 || !strings.Contains(out, "hello from web.test") {
		t.Fatalf("curl: %d %s", code, out)
	}
	t.Log(a.all())
}
