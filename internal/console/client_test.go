package console_test

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// person is a browser without a browser: an HTTP client with a cookie jar
// that reads the console's forms as they are served.
type person struct {
	t   testing.TB
	c   *http.Client
	url string
	// origin is sent as Origin on every POST (a browser's, by default).
	origin string
}

func newPerson(t testing.TB, r *rig) *person {
	t.Helper()
	jar, err := cookiejar.New(nil)
	must(t, err)
	return &person{t: t, url: r.URL, origin: r.URL, c: &http.Client{Jar: jar, Timeout: 20 * time.Second,
		Transport:     &http.Transport{DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// get fetches path without following a redirect.
func (p *person) get(path string) (*http.Response, string) {
	p.t.Helper()
	resp, err := p.c.Get(p.url + path)
	must(p.t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// post submits form to path as a browser on origin does.
func (p *person) post(path string, form url.Values) (*http.Response, string) {
	p.t.Helper()
	req, err := http.NewRequest(http.MethodPost, p.url+path, strings.NewReader(form.Encode()))
	must(p.t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if p.origin != "" {
		req.Header.Set("Origin", p.origin)
	}
	resp, err := p.c.Do(req)
	must(p.t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf is the CSRF token of the page at path.
func (p *person) csrf(path string) string {
	p.t.Helper()
	_, body := p.get(path)
	m := csrfField.FindStringSubmatch(body)
	if m == nil {
		p.t.Fatalf("%s has no form with a csrf field: %s", path, body)
	}
	return m[1]
}

// login logs in with token through the form and returns the answer.
func (p *person) login(token string) *http.Response {
	p.t.Helper()
	resp, _ := p.post("/login", url.Values{"csrf": {p.csrf("/login")}, "token": {token}, "next": {"/"}})
	return resp
}

// loggedIn is a person logged in with token.
func loggedIn(t testing.TB, r *rig, token string) *person {
	t.Helper()
	p := newPerson(t, r)
	if resp := p.login(token); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("login: %s", resp.Status)
	}
	return p
}

// cookie is the value of the jar's cookie name for the console.
func (p *person) cookie(name string) string {
	u, _ := url.Parse(p.url)
	for _, c := range p.c.Jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}
