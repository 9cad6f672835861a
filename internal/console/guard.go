package console

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// CSP is every console response's Content-Security-Policy: scripts,
// styles and fetches only from the console's own files (no inline script
// or style at all), forms only to itself, no framing, no plugins.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// maxForm bounds a form's body: a reason, a name, a token.
const maxForm = 64 << 10

// guard is the first step of every console route: the request must name
// this console's host (a DNS rebinding page that resolves its own name to
// the console's address gets nothing), gets the console's
// Content-Security-Policy, and a POST must come from the console's own
// origin.
func (c *Console) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !c.hostAllowed(r.Host) {
			http.Error(w, fmt.Sprintf("this console answers at %s; the host %q is not its own (set server.web.publicUrl to the address browsers use)", c.baseURL(), r.Host), http.StatusMisdirectedRequest)
			return
		}
		w.Header().Set("Content-Security-Policy", CSP)
		// Browsers send Origin "null" on a POST from a no-referrer page
		// (the listener's default); same-origin keeps the console's own
		// origin on its forms and still tells other sites nothing.
		w.Header().Set("Referrer-Policy", "same-origin")
		if r.Method == http.MethodPost {
			if err := c.sameOrigin(r); err != nil {
				c.log.Info("console: cross-site request refused", "path", r.URL.Path, "reason", err.Error())
				c.refuse(w, http.StatusForbidden, "Refused", err.Error()+": nothing was done. Use the console's own pages.")
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, maxForm)
		}
		next.ServeHTTP(w, r)
	})
}

// hostAllowed reports whether host (a request's Host) is the console's:
// the base URL's host, and for a loopback listener its other loopback
// spellings on the same port.
func (c *Console) hostAllowed(host string) bool {
	u, err := url.Parse(c.baseURL())
	if err != nil {
		return false
	}
	if strings.EqualFold(host, u.Host) {
		return true
	}
	h, port, err := net.SplitHostPort(host)
	if err != nil || port != u.Port() || !loopbackName(u.Hostname()) {
		return false
	}
	return loopbackName(h)
}

func loopbackName(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(h, "[]"))
	return ip != nil && ip.IsLoopback()
}

// sameOrigin refuses a POST a browser says came from elsewhere: a
// Sec-Fetch-Site other than same-origin, or an Origin other than the
// console's. A client that sends neither (no browser) is judged by the
// CSRF token alone.
func (c *Console) sameOrigin(r *http.Request) error {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		return fmt.Errorf("the request came from another site (Sec-Fetch-Site: %s)", site)
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return nil
	}
	scheme := "http://"
	if c.https() {
		scheme = "https://"
	}
	if origin == c.origin() || strings.EqualFold(origin, scheme+r.Host) {
		return nil
	}
	return fmt.Errorf("the request came from another origin (%s)", clip(origin, 100))
}

// origin is the base URL's scheme and host.
func (c *Console) origin() string {
	u, err := url.Parse(c.baseURL())
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// errCSRF is a form without this session's token.
var errCSRF = errors.New("the form is not from this session (it is older than your login, or from another page)")

// checkCSRF compares the form's csrf field with the session's token.
func checkCSRF(r *http.Request, want string) error {
	got := r.PostFormValue("csrf")
	if got == "" || want == "" || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		return errCSRF
	}
	return nil
}

// handlerFunc is a page or action of a logged-in person.
type handlerFunc func(w http.ResponseWriter, r *http.Request, u *user)

// page serves a GET for a logged-in person; without a session the browser
// is sent to the login page (and back here after).
func (c *Console) page(fn handlerFunc) http.Handler {
	return c.guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, err := c.userOf(r)
		if err != nil {
			c.toLogin(w, r, err)
			return
		}
		fn(w, r, u)
	}))
}

// action serves a POST of a logged-in person whose form carries the
// session's CSRF token.
func (c *Console) action(fn handlerFunc) http.Handler {
	return c.guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, err := c.userOf(r)
		if err != nil {
			c.toLogin(w, r, err)
			return
		}
		if err := checkCSRF(r, u.login.CSRF); err != nil {
			c.log.Info("console: form without the session's CSRF token refused", "path", r.URL.Path, "principal", u.name())
			c.refuse(w, http.StatusForbidden, "Refused", err.Error()+": nothing was done. Reload the page and try again.")
			return
		}
		fn(w, r, u)
	}))
}

// toLogin answers a request without a session: the login page for a GET
// (returning here after), a refusal for anything else.
func (c *Console) toLogin(w http.ResponseWriter, r *http.Request, err error) {
	if !errors.Is(err, errNoSession) {
		c.log.Warn("console: the session store failed", "error", err)
		c.refuse(w, http.StatusServiceUnavailable, "Unavailable", "The console's session store cannot be read right now; try again shortly.")
		return
	}
	if r.Method != http.MethodGet {
		c.refuse(w, http.StatusForbidden, "Not logged in", "Your session has ended: nothing was done. Log in again.")
		return
	}
	http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
}

// nextPath is where a login returns: a path of this console, never
// another site ("//evil", "/\evil" and absolute URLs are dropped).
func nextPath(v string) string {
	if !strings.HasPrefix(v, "/") || strings.HasPrefix(v, "//") || strings.HasPrefix(v, "/\\") || strings.HasPrefix(v, "/login") {
		return "/"
	}
	u, err := url.Parse(v)
	if err != nil || u.Host != "" || u.Scheme != "" {
		return "/"
	}
	return v
}

// clip shortens text a visitor sent before it is shown or logged.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
