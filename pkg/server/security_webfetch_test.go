package server_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
)

// TestWebfetchCannotReachInside is the attack of a model that asks
// webfetch for the server's own /metrics, for the cloud metadata service,
// and for an allowed host that redirects inside: each is refused at the
// dial, and the error names the address, its class and the key that would
// allow it.
func TestWebfetchCannotReachInside(t *testing.T) {
	t.Parallel()
	f := start(t, `{"skills": [], "builtins": {"webfetch": {"allowHosts": ["localhost"]}}}`)
	metrics := f.srv.MetricsAddr().String()
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://"+metrics+"/metrics", http.StatusFound)
	}))
	t.Cleanup(redirector.Close)
	ru, _ := url.Parse(redirector.URL)
	refused := func(addr, class string) string {
		return fmt.Sprintf("webfetch: refused to connect to %s: %s address (add it to builtins.webfetch.allowHosts to allow it)", addr, class)
	}
	for _, tc := range []struct{ url, want string }{
		{"http://" + metrics + "/metrics", refused(metrics, "loopback")},
		{"http://169.254.169.254/latest/meta-data/iam/security-credentials/", refused("169.254.169.254:80", "link-local")},
		{"http://localhost:" + ru.Port() + "/", refused(metrics, "loopback")},
	} {
		r := f.exec(t, "webfetch", fmt.Sprintf(`{"url": %q, "format": "text"}`, tc.url))
		if !r.GetIsError() || r.GetOutput() != tc.want {
			t.Errorf("webfetch %s:\n got %q\nwant %q", tc.url, r.GetOutput(), tc.want)
		}
	}
}
