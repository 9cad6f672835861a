package console

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Logging in and out. The login form has no session yet, so its CSRF
// token is a cookie of its own that the form repeats (double submit),
// beside the Origin and Sec-Fetch-Site checks every POST passes.

// loginView is the login page's content.
type loginView struct {
	// Open is true while auth is off: one button, no token.
	Open bool
	// OIDC is the provider's name for "Log in with <provider>" ("" = no
	// OIDC login).
	OIDC  string
	CSRF  string
	Next  string
	Error string
}

// loginPage shows the form (or, logged in already, goes on).
func (c *Console) loginPage(w http.ResponseWriter, r *http.Request) {
	next := nextPath(r.URL.Query().Get("next"))
	if _, err := c.userOf(r); err == nil {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	c.showLogin(w, http.StatusOK, next, "")
}

func (c *Console) showLogin(w http.ResponseWriter, status int, next, problem string) {
	csrf := randomToken()
	http.SetCookie(w, c.cookie(c.named("toolnexus-login"), csrf, 30*time.Minute))
	v := loginView{Open: c.opts.Core.Authenticator() == nil, CSRF: csrf, Next: next, Error: problem}
	if o := c.opts.Core.Config().Server.Web.OIDC; o != nil && !v.Open {
		v.OIDC = o.Name
	}
	c.write(w, status, "login", view{Title: "Log in", Body: v})
}

// loginToken checks the token of the form (or, with auth off, lets the
// anonymous caller in) and starts a session.
func (c *Console) loginToken(w http.ResponseWriter, r *http.Request) {
	next := nextPath(r.PostFormValue("next"))
	ck, err := r.Cookie(c.named("toolnexus-login"))
	if err != nil || checkCSRF(r, ck.Value) != nil {
		c.showLogin(w, http.StatusForbidden, next, "The login form expired or is not this console's: try again.")
		return
	}
	if wait, ok := c.limiter.allow(clientIP(r)); !ok {
		c.log.Info("console: login attempts throttled", "client", clientIP(r))
		w.Header().Set("Retry-After", fmt.Sprint(int(wait.Seconds())+1))
		c.showLogin(w, http.StatusTooManyRequests, next, fmt.Sprintf("Too many login attempts from your address: wait %d seconds, then try again.", int(wait.Seconds())+1))
		return
	}
	l, problem := c.checkLogin(r)
	if problem != "" {
		c.showLogin(w, http.StatusUnauthorized, next, problem)
		return
	}
	ctx, cancel := timeout(r)
	defer cancel()
	if err := c.startSession(ctx, w, r, l); err != nil {
		c.log.Warn("console: a session could not be stored", "error", err)
		c.showLogin(w, http.StatusServiceUnavailable, next, "The console's session store cannot be written right now; try again shortly.")
		return
	}
	http.SetCookie(w, c.cookie(c.named("toolnexus-login"), "", -1))
	c.log.Info("console: logged in", "principal", l.Name, "method", l.Method)
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// checkLogin is the login a token form proves, or the problem to show.
func (c *Console) checkLogin(r *http.Request) (login, string) {
	au := c.opts.Core.Authenticator()
	if au == nil {
		return login{Method: methodOpen}, ""
	}
	tok := strings.TrimSpace(r.PostFormValue("token"))
	if tok == "" {
		return login{}, "Enter your token: the value of one of auth.tokens (or the one your operator gave you)."
	}
	p, err := au.Check(r.Context(), tok)
	if err != nil {
		return login{}, "That token is not valid here."
	}
	if p.Issuer != "" {
		// A JWT pasted into the form: its session would outlive the
		// token. The OIDC login is the way for a provider's users.
		return login{}, "That is a token from an identity provider: use the provider's login button instead."
	}
	return login{Method: methodToken, Name: p.Name}, ""
}

// logout ends the session.
func (c *Console) logout(w http.ResponseWriter, r *http.Request, u *user) {
	ctx, cancel := timeout(r)
	defer cancel()
	c.endSession(ctx, w, r)
	c.log.Info("console: logged out", "principal", u.name())
	c.write(w, http.StatusOK, "message", view{Title: "Logged out", Body: "You are logged out. Close this tab, or log in again."})
}

// home sends a person to the first page they may use.
func (c *Console) home(w http.ResponseWriter, r *http.Request, u *user) {
	to := "/tools"
	if c.mayApprove(u) {
		to = "/approvals"
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// loginLimiter slows down guessing: each client address may try a token
// five times at once, then once every two seconds. Addresses are forgotten
// when too many are tracked, so it cannot grow without bound.
type loginLimiter struct {
	mu   sync.Mutex
	byIP map[string]*rate.Limiter
}

const (
	loginBurst      = 5
	loginEvery      = 2 * time.Second
	loginTrackedIPs = 10000
)

func newLoginLimiter() *loginLimiter { return &loginLimiter{byIP: map[string]*rate.Limiter{}} }

// allow takes one attempt for ip; when none is left it says how long to
// wait.
func (l *loginLimiter) allow(ip string) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	lim, ok := l.byIP[ip]
	if !ok {
		if len(l.byIP) >= loginTrackedIPs {
			clear(l.byIP)
		}
		lim = rate.NewLimiter(rate.Every(loginEvery), loginBurst)
		l.byIP[ip] = lim
	}
	res := lim.Reserve()
	if d := res.Delay(); d > 0 {
		res.Cancel()
		return d, false
	}
	return 0, true
}

// clientIP is the peer's address: the console does not trust forwarding
// headers (any client can send one). Behind a proxy every person shares
// the proxy's allowance.
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
