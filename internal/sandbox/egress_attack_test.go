package sandbox_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/egress"
	"github.com/toolnexus/toolnexus/internal/testutil"
)

// burstOrigin serves ?bytes=N downloads that all answer at once, when n
// have arrived (or after 5 s): each connection is open, and decided,
// before any byte is counted.
func burstOrigin(t *testing.T, n int64) int {
	t.Helper()
	var arrived atomic.Int64
	all := make(chan struct{})
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if arrived.Add(1) == n {
			close(all)
		}
		select {
		case <-all:
		case <-time.After(5 * time.Second):
		}
		size, _ := strconv.Atoi(r.URL.Query().Get("bytes"))
		w.Write(make([]byte, size))
	}))
	t.Cleanup(web.Close)
	return web.Listener.Addr().(*net.TCPAddr).Port
}

// TestEgressAttacksFromInside is issue 45's attacks on the egress proxy,
// made as a model would make them: commands in the sandboxed bash, with
// curl and Python through the proxy the environment names. Each used to
// get through.
func TestEgressAttacksFromInside(t *testing.T) {
	s := needEgress(t)
	for _, prog := range []string{"curl", "python3"} {
		if _, err := exec.LookPath(prog); err != nil {
			t.Skipf("%s is missing here (.ci/run installs it)", prog)
		}
	}
	f := newFixture(t)
	sink := testutil.NewSink(t)
	sinkPort, sunk := sink.Port, &sink.Received
	webPort := burstOrigin(t, 30)
	rules, err := egress.ParseRules("sandbox.egress", []string{"*.test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := &audited{}
	proxyIdle := func(idle time.Duration) *egress.Proxy {
		return egress.New(egress.Config{Rules: rules, Dial: toLoopback, Audit: a.add,
			Limits:   egress.Limits{Connections: 1024, Bytes: 1_000_000, Idle: idle},
			Resolver: names{"api.test": public, "upload.test": public, "dl.test": public, "ali.test": {netip.MustParseAddr("100.100.100.200")}}})
	}
	px, patient := proxyIdle(300*time.Millisecond), proxyIdle(time.Minute)
	// Each attack is a command of its own, with its own byte budget.
	sh := func(px *egress.Proxy, script string) string {
		f.policy.Egress = px.Bind(egress.Call{Principal: "mallory", Session: "s1", Tool: "bash"})
		out, _ := f.sh(t, s, "export HOME="+f.tmp+"; "+script)
		return out
	}

	t.Run("TLS naming another host with a trailing dot", func(t *testing.T) {
		sunk.Store(0)
		out := sh(px, fmt.Sprintf(`python3 - <<'EOF'
import os, socket, ssl
s = socket.create_connection(("127.0.0.1", 3128))
s.sendall(b"CONNECT api.test:%d HTTP/1.1\r\nHost: api.test\r\n\r\n")
print(s.recv(4096).split(b"\r\n")[0].decode())
ctx = ssl.create_default_context(); ctx.check_hostname = False; ctx.verify_mode = ssl.CERT_NONE
try:
    ctx.wrap_socket(s, server_hostname="secret.test.")
except Exception as e:
    print("handshake:", type(e).__name__)
EOF`, sinkPort))
		if !strings.Contains(out, "200 Connection established") || !strings.Contains(out, "handshake:") {
			t.Fatalf("%s", out)
		}
		if n := sunk.Load(); n != 0 {
			t.Fatalf("the ClientHello for secret.test. reached the host (%d bytes)", n)
		}
	})
	t.Run("a 20 MB upload with a 1,000,000-byte limit", func(t *testing.T) {
		sunk.Store(0)
		sh(px, fmt.Sprintf("head -c 20000000 /dev/zero | curl -sS --max-time 20 -X POST --data-binary @- http://upload.test:%d/", sinkPort))
		if n := sunk.Load(); n > 1_000_000 {
			t.Fatalf("the host received %d bytes of the upload", n)
		}
	})
	t.Run("30 parallel downloads against a 1,000,000-byte limit", func(t *testing.T) {
		var urls strings.Builder
		for i := 0; i < 30; i++ {
			fmt.Fprintf(&urls, " -o /dev/null 'http://dl.test:%d/?bytes=1048576&n=%d'", webPort, i)
		}
		// What the hosts sent, not the proxy's own 403 to a request made
		// once the budget was used up.
		out := sh(patient, "curl -sS -Z --parallel-immediate --parallel-max 30 -w '%{http_code} %{size_download}\\n'"+urls.String()+" 2>/dev/null | awk '$1 != 403 {s += $2} END {print \"total\", s}'")
		var total int64
		if _, err := fmt.Sscanf(out[strings.Index(out, "total"):], "total %d", &total); err != nil || total > 1_000_000 {
			t.Fatalf("30 parallel downloads received %d bytes with a limit of 1,000,000:\n%s", total, out)
		}
		if total < 500_000 {
			t.Fatalf("only %d bytes got through: the budget must be shared, not refused early:\n%s", total, out)
		}
	})
	t.Run("a request line cut off stays open", func(t *testing.T) {
		out := sh(px, `python3 - <<'EOF'
import socket, time
s = socket.create_connection(("127.0.0.1", 3128))
s.sendall(b"GET http://api.test/ HTT")
s.settimeout(10)
t0 = time.time()
try:
    s.recv(1)
    print("closed by the proxy after %.1f s" % (time.time() - t0))
except socket.timeout:
    print("still open after 10 s")
EOF`)
		if !strings.Contains(out, "closed by the proxy") {
			t.Fatalf("%s", out)
		}
	})
	t.Run("the metadata services", func(t *testing.T) {
		out := sh(px, "curl -sS --fail-with-body http://169.254.169.254/latest/meta-data/; curl -sS --fail-with-body http://ali.test/latest/meta-data/")
		for _, want := range []string{
			"169.254.169.254:80 is refused: it is a link-local address",
			"ali.test:80 is refused: it resolves to 100.100.100.200, a metadata address",
		} {
			if !strings.Contains(out, want) {
				t.Fatalf("output lacks %q:\n%s", want, out)
			}
		}
		if strings.Contains(out, "add ") {
			t.Fatalf("a refusal of a metadata address suggests an entry to add:\n%s", out)
		}
	})
	var sni bool
	for _, r := range a.all() {
		sni = sni || (r.Rule == "sni" && strings.Contains(r.Reason, "cannot read"))
	}
	if !sni {
		t.Fatalf("no sni refusal audited: %+v", a.all())
	}
}
