package sandbox_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/internal/egress"
	"github.com/toolnexus/toolnexus/internal/testutil"
)

// egressWorld is the local servers a sandboxed command reaches by name
// through the proxy: an HTTPS API, a dumb-HTTP git repository, a simple
// package index with one wheel, an npm tarball, and a redirect to a
// denied host. Every name resolves (through the test resolver) to a
// public address, which the proxy's test dialler takes to the servers on
// 127.0.0.1; sneaky.test resolves to loopback itself, which no name reaches.
type egressWorld struct {
	httpsPort, webPort int
	caFile             string
	res                names
}

func newEgressWorld(t *testing.T, ws string) *egressWorld {
	t.Helper()
	w := &egressWorld{res: names{
		"api.test": public, "web.test": public, "evil.test": public,
		"sneaky.test": loopback, "meta.test": {netip.MustParseAddr("169.254.169.254")},
	}}
	ca := testutil.NewCA(t, "egress")
	pem, err := os.ReadFile(ca.PEM)
	if err != nil {
		t.Fatal(err)
	}
	w.caFile = filepath.Join(ws, "ca.pem")
	if err := os.WriteFile(w.caFile, pem, 0o644); err != nil {
		t.Fatal(err)
	}
	api := httptest.NewUnstartedServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(rw, "secure hello from %s", r.Host)
	}))
	api.TLS = &tls.Config{Certificates: []tls.Certificate{ca.ServerFor(t, "api.test", "evil.test", "sneaky.test")}}
	api.StartTLS()
	t.Cleanup(api.Close)
	w.httpsPort = api.Listener.Addr().(*net.TCPAddr).Port

	root := t.TempDir()
	gitRepo(t, filepath.Join(root, "repo.git"))
	writeWheel(t, filepath.Join(root, "files", "tnpkg-1.0-py3-none-any.whl"))
	writeNpmTarball(t, filepath.Join(root, "files", "tnpkg-1.0.0.tgz"))
	files := http.FileServer(http.Dir(root))
	web := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/simple/tnpkg/":
			fmt.Fprint(rw, `<html><body><a href="/files/tnpkg-1.0-py3-none-any.whl">tnpkg-1.0-py3-none-any.whl</a></body></html>`)
		case r.URL.Path == "/redirect":
			http.Redirect(rw, r, fmt.Sprintf("http://evil.test:%d/", w.webPort), http.StatusFound)
		case r.URL.Path == "/hello":
			fmt.Fprintf(rw, "hello from %s", r.Host)
		default:
			files.ServeHTTP(rw, r)
		}
	}))
	t.Cleanup(web.Close)
	w.webPort = web.Listener.Addr().(*net.TCPAddr).Port
	return w
}

func run(t *testing.T, dir string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}

// gitRepo makes a bare repository served as dumb HTTP (update-server-info).
func gitRepo(t *testing.T, bare string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git on this machine (.ci/run installs it)")
	}
	src := t.TempDir()
	run(t, src, "git", "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(src, "README"), []byte("cloned through the proxy\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, src, "git", "add", "README")
	run(t, src, "git", "commit", "-q", "-m", "first")
	run(t, src, "git", "clone", "-q", "--bare", src, bare)
	run(t, bare, "git", "update-server-info")
}

// writeWheel writes a minimal valid wheel.
func writeWheel(t *testing.T, path string) {
	t.Helper()
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	for name, body := range map[string]string{
		"tnpkg/__init__.py":             "VALUE = 1\n",
		"tnpkg-1.0.dist-info/METADATA":  "Metadata-Version: 2.1\nName: tnpkg\nVersion: 1.0\n",
		"tnpkg-1.0.dist-info/WHEEL":     "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
		"tnpkg-1.0.dist-info/RECORD":    "",
		"tnpkg-1.0.dist-info/top_level": "tnpkg\n",
	} {
		fw, err := z.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		fw.Write([]byte(body))
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, buf.Bytes())
}

// writeNpmTarball writes an npm package tarball (package/package.json).
func writeNpmTarball(t *testing.T, path string) {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, body := range map[string]string{
		"package/package.json": `{"name": "tnpkg", "version": "1.0.0", "main": "index.js"}`,
		"package/index.js":     "module.exports = 'installed through the proxy';\n",
	} {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg})
		tw.Write([]byte(body))
	}
	tw.Close()
	gz.Close()
	writeFile(t, path, buf.Bytes())
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestEgressRealClients runs curl, git, pip and npm inside the sandbox
// with egress set: allowed hosts work; denied ones, IP literals, names
// resolving inside, a redirect to a denied host, a raw connect without
// the proxy and DNS from inside are refused, with the reason.
func TestEgressRealClients(t *testing.T) {
	s := needEgress(t)
	for _, prog := range []string{"curl", "git", "python3", "npm", "node"} {
		if _, err := exec.LookPath(prog); err != nil {
			if os.Getenv("TOOLNEXUS_REQUIRE_E2E") != "" {
				t.Fatalf("%s is missing (.ci/run installs it)", prog)
			}
			t.Skipf("%s is missing here (.ci/run installs it)", prog)
		}
	}
	f := newFixture(t)
	w := newEgressWorld(t, f.ws)
	a := &audited{}
	px := egressProxy(t, []string{"api.test", "web.test", "*.test"}, []string{"evil.test"}, w.res, a)
	f.policy.Egress = px.Bind(egress.Call{Principal: "alice", Session: "s1", Tool: "bash"})
	web := fmt.Sprintf("web.test:%d", w.webPort)
	env := "export HOME=" + f.tmp + "; "

	for _, tc := range []struct {
		name, script string
		ok           bool
		want         []string
	}{
		{"curl https via CONNECT", fmt.Sprintf("curl -sS --cacert ca.pem https://api.test:%d/", w.httpsPort), true,
			[]string{"secure hello from api.test"}},
		{"curl over socks5", fmt.Sprintf("curl -sS --proxy socks5h://127.0.0.1:3128 http://%s/hello", web), true,
			[]string{"hello from web.test"}},
		{"git clone over http", fmt.Sprintf("git clone -q http://%s/repo.git cloned && cat cloned/README", web), true,
			[]string{"cloned through the proxy"}},
		{"pip download", fmt.Sprintf("python3 -m pip download -q --no-deps --no-cache-dir --disable-pip-version-check --trusted-host web.test --index-url http://%s/simple/ -d wheels tnpkg && ls wheels", web), true,
			[]string{"tnpkg-1.0-py3-none-any.whl"}},
		{"npm install a tarball url", fmt.Sprintf("mkdir npmproj && cd npmproj && echo '{}' > package.json && npm install --no-audit --no-fund --loglevel=error http://%s/files/tnpkg-1.0.0.tgz >/dev/null && node -p 'require(\"tnpkg\")'", web), true,
			[]string{"installed through the proxy"}},
		{"denied host", fmt.Sprintf("curl -sSv --cacert ca.pem https://evil.test:%d/", w.httpsPort), false,
			[]string{"403", "denied by sandbox.egress.deny[0]"}},
		// CONNECT to an allowed host, then TLS for another name (SNI):
		// the tunnel ends at the ClientHello; the audit line says why.
		{"tls for another name through an allowed tunnel", fmt.Sprintf("curl -sS --cacert ca.pem --connect-to evil.test:%d:api.test:%d https://evil.test:%d/", w.httpsPort, w.httpsPort, w.httpsPort), false,
			[]string{"curl: (35)"}},
		{"ip literal", fmt.Sprintf("curl -sS --fail-with-body http://127.0.0.1:%d/hello", w.webPort), false,
			[]string{fmt.Sprintf("127.0.0.1:%d is refused: it is a loopback address", w.webPort)}},
		{"name resolving to loopback", fmt.Sprintf("curl -sSv --cacert ca.pem https://sneaky.test:%d/", w.httpsPort), false,
			[]string{"403", "resolves to 127.0.0.1, a loopback address"}},
		{"name resolving to the metadata address", "curl -sS --fail-with-body http://meta.test/latest/meta-data/", false,
			[]string{"resolves to 169.254.169.254, a link-local address"}},
		{"redirect to a denied host", fmt.Sprintf("curl -sSL --fail-with-body http://%s/redirect", web), false,
			[]string{"evil.test:", "denied by sandbox.egress.deny[0]"}},
		{"socks5 to a denied host", fmt.Sprintf("curl -sS --proxy socks5h://127.0.0.1:3128 http://evil.test:%d/hello", w.webPort), false,
			// RFC 1928 reply 2: "connection not allowed by ruleset".
			[]string{"SOCKS5 connection to evil.test. (2)"}},
		{"raw tcp without the proxy", fmt.Sprintf("echo hi > /dev/tcp/127.0.0.1/%d; echo hi > /dev/tcp/192.0.2.1/80", w.webPort), false,
			[]string{"Connection refused", "Network is unreachable"}},
		{"dns from inside", `python3 -c 'import socket; socket.getaddrinfo("example.com", 443)' 2>&1 | tail -1; echo x > /dev/udp/8.8.8.8/53`, false,
			[]string{"socket.gaierror", "Network is unreachable"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, code := f.sh(t, s, env+tc.script+"; exit $?")
			if (code == 0) != tc.ok {
				t.Fatalf("exit %d, want ok=%v:\n%s", code, tc.ok, out)
			}
			for _, want := range tc.want {
				if !strings.Contains(out, want) {
					t.Fatalf("output lacks %q:\n%s", want, out)
				}
			}
		})
	}

	recs := a.all()
	var allowed, refused int
	for _, r := range recs {
		if r.Principal != "alice" || r.Session != "s1" || r.Tool != "bash" {
			t.Fatalf("record without the call: %+v", r)
		}
		if r.Allowed {
			allowed++
			if r.Received == 0 || r.Sent == 0 {
				t.Fatalf("allowed connection without bytes: %+v", r)
			}
		} else {
			refused++
			if r.Rule == "" || r.Reason == "" {
				t.Fatalf("refusal without its rule: %+v", r)
			}
		}
	}
	sni := false
	for _, r := range recs {
		sni = sni || (r.Rule == "sni" && r.Host == "api.test" && strings.Contains(r.Reason, "carries TLS for evil.test"))
	}
	if !sni {
		t.Fatalf("no sni refusal audited: %+v", recs)
	}
	if allowed < 5 || refused < 6 {
		t.Fatalf("audit: %d allowed, %d refused: %+v", allowed, refused, recs)
	}
}
