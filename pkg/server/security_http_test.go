package server_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// headerLog records the headers each request brought.
type headerLog struct {
	mu   sync.Mutex
	seen []http.Header
}

func (l *headerLog) add(h http.Header) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, h.Clone())
}

func (l *headerLog) all() []http.Header {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]http.Header(nil), l.seen...)
}

// TestHTTPToolsDoNotLeak performs the three attacks on HTTP tools over
// gRPC: an upstream that redirects to another host to collect the
// configured API key, an upstream that echoes the key into the result, and
// a model that puts ".." into a {placeholder} to climb the upstream's path.
func TestHTTPToolsDoNotLeak(t *testing.T) {
	const key = "x-api-key-secret-55d1"
	const bearerTok = "bearer-secret-0a9e"
	t.Setenv("TN_SEC_HTTP_KEY", key)
	t.Setenv("TN_SEC_HTTP_BEARER", bearerTok)

	var collected headerLog
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		collected.add(r.Header)
		io.WriteString(w, "collected")
	}))
	t.Cleanup(collector.Close)
	var paths []string
	var mu sync.Mutex
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.EscapedPath())
		mu.Unlock()
		switch {
		case r.URL.Path == "/redirect":
			http.Redirect(w, r, collector.URL+"/steal", http.StatusFound)
		case r.URL.Path == "/echo":
			fmt.Fprintf(w, "you sent X-Api-Key=%s and %s", r.Header.Get("X-Api-Key"), r.Header.Get("Authorization"))
		case r.URL.Path == "/fail":
			http.Error(w, "bad key "+r.Header.Get("X-Api-Key"), http.StatusForbidden)
		default:
			io.WriteString(w, "item "+r.URL.Path)
		}
	}))
	t.Cleanup(upstream.Close)

	headers := `{"X-Api-Key": "${TN_SEC_HTTP_KEY}", "Authorization": "Bearer ${TN_SEC_HTTP_BEARER}"}`
	f := start(t, fmt.Sprintf(`{"builtins": false, "skills": [], "http": [
		{"name": "follow", "url": %q, "headers": %s},
		{"name": "echo", "url": %q, "headers": %s},
		{"name": "fail", "url": %q, "headers": %s},
		{"name": "item", "url": %q, "headers": %s}]}`,
		upstream.URL+"/redirect", headers, upstream.URL+"/echo", headers, upstream.URL+"/fail", headers, upstream.URL+"/api/items/{id}", headers))

	// (a) The redirect to another host arrives without the configured headers.
	if r := f.exec(t, "follow", `{}`); r.GetIsError() || r.GetOutput() != "collected" {
		t.Fatalf("follow: %v", r)
	}
	for _, h := range collected.all() {
		if h.Get("X-Api-Key") != "" || h.Get("Authorization") != "" {
			t.Fatalf("the other host received the configured headers: %v", h)
		}
	}
	if len(collected.all()) != 1 {
		t.Fatalf("the collector saw %d requests, want 1", len(collected.all()))
	}

	// (b) An echoed secret is cut from results and errors.
	if r := f.exec(t, "echo", `{}`); r.GetIsError() || r.GetOutput() != "you sent X-Api-Key=[redacted] and Bearer [redacted]" {
		t.Fatalf("echo: %q", r.GetOutput())
	}
	if r := f.exec(t, "fail", `{}`); !r.GetIsError() || r.GetOutput() != "HTTP 403: bad key [redacted]\n" {
		t.Fatalf("fail: %q", r.GetOutput())
	}

	// (c) "." and ".." never reach the upstream path.
	for _, id := range []string{"..", "."} {
		r := f.exec(t, "item", fmt.Sprintf(`{"id": %q}`, id))
		want := `item: argument "id" for the URL placeholder {id} must not be "." or ".."`
		if !r.GetIsError() || r.GetOutcome().String() != "OUTCOME_INVALID_ARGUMENTS" || r.GetOutput() != want {
			t.Fatalf("id %q: %v, want INVALID_ARGUMENTS %q", id, r, want)
		}
	}
	if r := f.exec(t, "item", `{"id": "../admin"}`); r.GetIsError() || r.GetOutput() != "item /api/items/../admin" {
		t.Fatalf("id ../admin is one escaped segment: %q", r.GetOutput())
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range paths {
		if strings.HasSuffix(p, "/..") || strings.HasSuffix(p, "/.") || p == "/api/items" {
			t.Fatalf("the upstream saw the path %s", p)
		}
	}
}
