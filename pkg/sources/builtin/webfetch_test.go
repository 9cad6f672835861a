package builtin_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/sources/builtin"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

const page = `<!DOCTYPE html><html><head><title>T</title><style>p { color: red }</style>
<script>alert("hi")</script></head>
<body><h1>Title</h1>
<p>Some <b>bold</b> and a <a href="/x">link</a>.</p>


<p>Second   paragraph</p><script>var x = 1;</script>
<ul><li>one</li><li>two</li></ul></body></html>`

func fetchServer(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	})
	mux.HandleFunc("/plain", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "<b>not html</b>\n")
	})
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "gone", http.StatusNotFound)
	})
	mux.HandleFunc("/redirect/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		if n == 0 {
			http.Redirect(w, r, "/page", http.StatusFound)
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/redirect/%d", n-1), http.StatusFound)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte(strings.Repeat("b", builtin.MaxFetchBody+1)))
	})
	mux.HandleFunc("/long", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte(strings.Repeat("l", 5000)))
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // until the client gives up
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// loopbackAllowed lets webfetch reach the test servers on 127.0.0.1,
// which the dial guard refuses by default.
var loopbackAllowed = builtin.Config{Enabled: true, Webfetch: builtin.WebfetchConfig{AllowHosts: []string{"127.0.0.1"}}}

func TestWebfetch(t *testing.T) {
	srv := fetchServer(t)
	k := newKitConfig(t, loopbackAllowed, 4096)
	tests := []struct {
		name string
		args any
		want want
	}{
		{"markdown by default", map[string]any{"url": srv.URL + "/page"},
			want{output: "# Title\n\nSome **bold** and a [link](" + srv.URL + "/x).\n\nSecond paragraph\n\n- one\n- two",
				meta: map[string]any{"status": 200, "format": "markdown"}}},
		{"text", map[string]any{"url": srv.URL + "/page", "format": "text"},
			want{output: "Title\n\nSome bold and a link.\n\nSecond paragraph\n\none\n\ntwo",
				meta: map[string]any{"status": 200, "format": "text"}}},
		{"html as is", map[string]any{"url": srv.URL + "/page", "format": "html"},
			want{output: page, meta: map[string]any{"status": 200, "format": "html"}}},
		{"non-HTML body is not converted", map[string]any{"url": srv.URL + "/plain"},
			want{output: "<b>not html</b>\n", meta: map[string]any{"status": 200, "format": "markdown"}}},
		{"redirects followed", map[string]any{"url": srv.URL + "/redirect/8", "format": "text"},
			want{output: "Title\n\nSome bold and a link.\n\nSecond paragraph\n\none\n\ntwo", meta: map[string]any{"status": 200, "format": "text"}}},
		{"non-2xx", map[string]any{"url": srv.URL + "/missing"},
			want{output: "HTTP 404", isError: true, meta: map[string]any{"status": 404}}},
		{"output cap", map[string]any{"url": srv.URL + "/long"},
			want{output: strings.Repeat("l", 4096) + "\n[output truncated: 904 bytes omitted]", meta: map[string]any{"status": 200, "format": "markdown", "truncated": true}}},
		{"body cap", map[string]any{"url": srv.URL + "/big"},
			want{output: "webfetch: response body is larger than 5242880 bytes (5 MiB); fetch a smaller page", isError: true}},
		{"timeout", map[string]any{"url": srv.URL + "/slow", "timeout": 0.2},
			want{output: "webfetch: request timed out after 200ms", isError: true, outcome: tool.OutcomeTimeout}},
		{"url required", `{}`, want{output: "webfetch: url is required", isError: true, outcome: tool.OutcomeInvalidArguments}},
		{"bad scheme", map[string]any{"url": "file:///etc/passwd"},
			want{output: "webfetch: url must be an absolute http:// or https:// URL", isError: true, outcome: tool.OutcomeInvalidArguments}},
		{"bad format", map[string]any{"url": srv.URL, "format": "pdf"},
			want{output: "webfetch: format must be one of text, markdown, html", isError: true, outcome: tool.OutcomeInvalidArguments}},
		{"bad timeout", map[string]any{"url": srv.URL, "timeout": -1},
			want{output: "webfetch: timeout must be a positive number of seconds", isError: true, outcome: tool.OutcomeInvalidArguments}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { check(t, k.run("webfetch", tc.args), tc.want) })
	}
}

func TestWebfetchRedirectLimit(t *testing.T) {
	srv := fetchServer(t)
	k := newKitConfig(t, loopbackAllowed, 0)
	// /redirect/9 is ten redirects in all: allowed. /redirect/10 is eleven.
	if res := k.run("webfetch", map[string]any{"url": srv.URL + "/redirect/9"}); res.IsError {
		t.Errorf("10 redirects: %s", res.Output)
	}
	res := k.run("webfetch", map[string]any{"url": srv.URL + "/redirect/10"})
	if !res.IsError || !strings.Contains(res.Output, "stopped after 10 redirects") || !strings.HasPrefix(res.Output, "webfetch: ") {
		t.Errorf("11 redirects: %+v", res)
	}
}
