package web_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/toolnexus/toolnexus/internal/web"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func serve(t *testing.T, opts web.Options, mount func(*web.Server)) *web.Server {
	t.Helper()
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	w := web.New(opts)
	mount(w)
	if err := w.Listen(); err != nil {
		t.Fatal(err)
	}
	w.Serve(make(chan error, 1))
	t.Cleanup(func() { w.Shutdown(context.Background()) })
	return w
}

// client keeps no idle connection, so nothing outlives a test.
var client = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

func get(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// A mounted page answers on its exact path only, every response carries
// the security headers, and the page's text is escaped.
func TestMountedPagesAndSecurityHeaders(t *testing.T) {
	w := serve(t, web.Options{}, func(w *web.Server) {
		w.HandleFunc("GET /oauth/callback", func(rw http.ResponseWriter, r *http.Request) {
			web.Page(rw, http.StatusBadRequest, false, "Login failed", r.URL.Query().Get("error"))
		})
	})
	resp, body := get(t, w.URL("/oauth/callback?error=%3Cscript%3Ealert(1)%3C/script%3E"))
	if resp.StatusCode != http.StatusBadRequest || strings.Contains(body, "<script>") || !strings.Contains(body, "&lt;script&gt;") {
		t.Fatalf("%s %s", resp.Status, body)
	}
	for h, want := range map[string]string{"Content-Security-Policy": "default-src 'none'", "X-Frame-Options": "DENY",
		"Referrer-Policy": "no-referrer", "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"} {
		if got := resp.Header.Get(h); !strings.Contains(got, want) {
			t.Errorf("%s = %q, want %q", h, got, want)
		}
	}
	if resp.Header.Get("Strict-Transport-Security") != "" {
		t.Error("HSTS on plain HTTP without an https publicUrl")
	}
	for _, p := range []string{"/oauth/callback/extra", "/oauth/", "/", "/oauth/callbackx"} {
		if resp, _ := get(t, w.URL(p)); resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %s, want 404 (nothing else lives on the callback's path)", p, resp.Status)
		}
	}
	resp, _ = get(t, w.URL("/oauth/callback"))
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("exact path: %s", resp.Status)
	}
	req, _ := http.NewRequest(http.MethodPost, w.URL("/oauth/callback"), nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST on a GET page: %s", resp.Status)
	}
}

func TestPublicURLAndHSTS(t *testing.T) {
	w := serve(t, web.Options{PublicURL: "https://tools.example.com/"}, func(w *web.Server) {
		w.HandleFunc("GET /x", func(rw http.ResponseWriter, r *http.Request) {})
	})
	if got := w.URL("/oauth/callback"); got != "https://tools.example.com/oauth/callback" {
		t.Fatalf("URL = %q", got)
	}
	resp, _ := get(t, "http://"+w.Addr().String()+"/x")
	if resp.Header.Get("Strict-Transport-Security") == "" {
		t.Error("no HSTS although browsers reach it over https")
	}
}

// Shutdown ends the listener (goleak checks its goroutine) and is safe to
// repeat, and before Serve.
func TestShutdown(t *testing.T) {
	w := web.New(web.Options{Addr: "127.0.0.1:0"})
	if err := w.Listen(); err != nil {
		t.Fatal(err)
	}
	w.Shutdown(context.Background())
	w.Shutdown(context.Background())
	w2 := serve(t, web.Options{}, func(*web.Server) {})
	addr := w2.Addr().String()
	w2.Shutdown(context.Background())
	if resp, err := client.Get("http://" + addr + "/"); err == nil {
		resp.Body.Close()
		t.Fatal("still answering after Shutdown")
	}
}
