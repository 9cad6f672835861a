package builtin_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/pkg/sources/builtin"
)

// webfetch refuses destinations inside, checked on the address it actually
// connects to: by IP, by a name that resolves inside, and after a redirect.
func TestWebfetchRefusesInternalDestinations(t *testing.T) {
	inside := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "internal secret")
	}))
	t.Cleanup(inside.Close)
	u, _ := url.Parse(inside.URL)
	k := newKit(t)
	for _, tc := range []struct{ url, addr, class string }{
		{inside.URL + "/metrics", u.Host, "loopback"},
		{"http://localhost:" + u.Port() + "/metrics", "", "loopback"},
		{"http://169.254.169.254/latest/meta-data/", "169.254.169.254:80", "link-local"},
		{"http://10.1.2.3:8080/", "10.1.2.3:8080", "private"},
		{"http://192.168.0.1/", "192.168.0.1:80", "private"},
		{"http://172.16.0.1/", "172.16.0.1:80", "private"},
		{"http://0.0.0.0:" + u.Port() + "/", "0.0.0.0:" + u.Port(), "unspecified"},
		{"http://[::1]:" + u.Port() + "/", "[::1]:" + u.Port(), "loopback"},
		{"http://[fd00::1]/", "[fd00::1]:80", "private"},
		{"http://[::ffff:127.0.0.1]:" + u.Port() + "/", "127.0.0.1:" + u.Port(), "loopback"},
	} {
		res := k.run("webfetch", map[string]any{"url": tc.url, "format": "text"})
		want := fmt.Sprintf("webfetch: refused to connect to %s: %s address (add it to builtins.webfetch.allowHosts to allow it)", tc.addr, tc.class)
		if tc.addr == "" {
			// localhost resolves to 127.0.0.1 and maybe ::1: either is refused.
			if !res.IsError || !strings.Contains(res.Output, ": loopback address (add it to builtins.webfetch.allowHosts to allow it)") {
				t.Errorf("%s: %+v", tc.url, res)
			}
			continue
		}
		if !res.IsError || res.Output != want {
			t.Errorf("%s:\n got %q\nwant %q", tc.url, res.Output, want)
		}
	}
}

// Issue 45, 3: the ranges that are not the public internet beyond RFC 1918
// and loopback — the shared address space (one cloud's metadata service
// is 100.100.100.200), benchmarking, reserved, the IETF block — and IPv6
// forms that carry an IPv4 address (NAT64, 6to4, IPv4-compatible, Teredo)
// are refused at the dial, with the egress proxy's classification: webfetch
// of http://100.100.100.200/latest/meta-data/ used to connect.
func TestWebfetchRefusesEveryInsideRange(t *testing.T) {
	inside := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "internal secret")
	}))
	t.Cleanup(inside.Close)
	port := inside.Listener.Addr().(*net.TCPAddr).Port
	k := newKit(t)
	for _, tc := range []struct{ url, addr, class string }{
		{"http://100.100.100.200/latest/meta-data/", "100.100.100.200:80", "metadata"},
		{"http://100.64.0.1/", "100.64.0.1:80", "shared"},
		{"http://198.18.0.1/", "198.18.0.1:80", "benchmarking"},
		{"http://240.0.0.1/", "240.0.0.1:80", "reserved"},
		{"http://192.0.0.170/", "192.0.0.170:80", "reserved"},
		{fmt.Sprintf("http://[64:ff9b::7f00:1]:%d/", port), fmt.Sprintf("[64:ff9b::7f00:1]:%d", port), "loopback (IPv4 127.0.0.1 in NAT64)"},
		{"http://[64:ff9b::a9fe:a9fe]/", "[64:ff9b::a9fe:a9fe]:80", "link-local (IPv4 169.254.169.254 in NAT64)"},
		{fmt.Sprintf("http://[2002:7f00:1::1]:%d/", port), fmt.Sprintf("[2002:7f00:1::1]:%d", port), "loopback (IPv4 127.0.0.1 in 6to4)"},
		{fmt.Sprintf("http://[::7f00:1]:%d/", port), fmt.Sprintf("[::7f00:1]:%d", port), "loopback (IPv4 127.0.0.1 in an IPv4-compatible address)"},
		{"http://[2001:0:a9fe:a9fe::1]/", "[2001:0:a9fe:a9fe::1]:80", "link-local (IPv4 169.254.169.254 in Teredo (server))"},
		{"http://[fd00:ec2::254]/latest/meta-data/", "[fd00:ec2::254]:80", "metadata"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		res := k.runCtx(ctx, "webfetch", map[string]any{"url": tc.url, "format": "text"})
		cancel()
		want := fmt.Sprintf("webfetch: refused to connect to %s: %s address (add it to builtins.webfetch.allowHosts to allow it)", tc.addr, tc.class)
		if !res.IsError || res.Output != want {
			t.Errorf("%s:\n got %q\nwant %q", tc.url, res.Output, want)
		}
	}
}

// A host the operator allowed redirects to one they did not: the redirect
// is refused at the dial, however the first hop was allowed.
func TestWebfetchRedirectIntoTheServerIsRefused(t *testing.T) {
	inside := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "internal secret")
	}))
	t.Cleanup(inside.Close)
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, inside.URL+"/metrics", http.StatusFound)
	}))
	t.Cleanup(redirector.Close)
	ru, _ := url.Parse(redirector.URL)
	iu, _ := url.Parse(inside.URL)
	k := newKitConfig(t, builtin.Config{Enabled: true, Webfetch: builtin.WebfetchConfig{AllowHosts: []string{"localhost"}}}, 0)
	res := k.run("webfetch", map[string]any{"url": "http://localhost:" + ru.Port() + "/go", "format": "text"})
	want := "webfetch: refused to connect to " + iu.Host + ": loopback address (add it to builtins.webfetch.allowHosts to allow it)"
	if !res.IsError || res.Output != want {
		t.Fatalf("redirect to %s:\n got %q\nwant %q", inside.URL, res.Output, want)
	}
	// The allowed name itself is reachable.
	k2 := newKitConfig(t, builtin.Config{Enabled: true, Webfetch: builtin.WebfetchConfig{AllowHosts: []string{"localhost"}}}, 0)
	if res := k2.run("webfetch", map[string]any{"url": "http://localhost:" + iu.Port() + "/", "format": "text"}); res.IsError || res.Output != "internal secret" {
		t.Fatalf("allowed host: %+v", res)
	}
	// An allowed prefix lets the redirect through.
	k3 := newKitConfig(t, builtin.Config{Enabled: true, Webfetch: builtin.WebfetchConfig{AllowHosts: []string{"127.0.0.0/8"}}}, 0)
	if res := k3.run("webfetch", map[string]any{"url": redirector.URL + "/go", "format": "text"}); res.IsError || res.Output != "internal secret" {
		t.Fatalf("allowed prefix: %+v", res)
	}
}

// A 5 MiB page asked for as markdown costs memory in proportion to its
// text, not the ~400 MiB the markdown converter allocates on it: larger
// pages are converted to text by a streaming tokenizer.
func TestWebfetchLargePageMemoryIsBounded(t *testing.T) {
	para := "<div><p>Some <b>bold</b> text and <a href='/x'>a link</a>.</p><script>var x = 1;</script></div>\n"
	page := "<html><head><title>T</title></head><body>" + strings.Repeat(para, (builtin.MaxFetchBody-200)/len(para)) + "</body></html>"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, page)
	}))
	t.Cleanup(srv.Close)
	k := newKitConfig(t, loopbackAllowed, 1<<20)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res := k.run("webfetch", map[string]any{"url": srv.URL})
	runtime.ReadMemStats(&after)
	if res.IsError || res.Metadata["format"] != "text" || !strings.HasPrefix(res.Output, "Some bold text and a link.\n\nSome bold") {
		t.Fatalf("large page: %v %q", res.Metadata, res.Output[:min(len(res.Output), 200)])
	}
	t.Logf("allocated %d MiB", (after.TotalAlloc-before.TotalAlloc)>>20)
	if got := (after.TotalAlloc - before.TotalAlloc) >> 20; got > 120 {
		t.Fatalf("fetching and converting a 5 MiB page allocated %d MiB; want at most 120", got)
	}
}
