package builtin_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"testing"

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
