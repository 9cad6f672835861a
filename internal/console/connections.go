package console

import (
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/toolnexus/toolnexus/pkg/sources/oauthclient"
)

// The caller's OAuth connections (ConnectionService): Connect sends the
// browser to the upstream's login, whose callback (/oauth/callback)
// brings it back here; Disconnect forgets and revokes. An admin sees
// everyone's connections, and an admin's Connect also makes the
// connection the upstream's tools are listed with, as on gRPC.

type connectionsView struct {
	On          bool
	Upstreams   []string
	Connections []oauthclient.Connection
	Admin       bool
	Me          string
}

func (c *Console) connectionsPage(w http.ResponseWriter, r *http.Request, u *user) {
	v := connectionsView{On: c.opts.Connections != nil, Admin: u.admin(), Me: u.name()}
	if v.On {
		ctx, cancel := timeout(r)
		defer cancel()
		list, err := c.opts.Connections.List(ctx, u.name(), u.admin())
		if err != nil {
			c.render(w, r, u, http.StatusServiceUnavailable, "message", "Connections", "The connections cannot be read right now: "+err.Error())
			return
		}
		v.Connections = list
		v.Upstreams = c.opts.Connections.Upstreams()
		slices.Sort(v.Upstreams)
	}
	c.render(w, r, u, http.StatusOK, "connections", "Connections", v)
}

// continueView is the page between Connect and the upstream's login.
type continueView struct {
	Upstream string
	URL      string
}

// connect starts the caller's login at an upstream. The answer is a page
// that continues to the login rather than a redirect: the console's
// Content-Security-Policy (form-action 'self') would stop a form's
// redirect to another origin.
func (c *Console) connect(w http.ResponseWriter, r *http.Request, u *user) {
	name := r.PostFormValue("name")
	if c.opts.Connections == nil || name == "" {
		c.back(w, r, "/connections", flash{Text: "Choose an upstream to connect."})
		return
	}
	ctx, cancel := timeout(r)
	defer cancel()
	f, err := c.opts.Connections.Connect(ctx, u.name(), name, u.admin())
	if err != nil {
		c.back(w, r, "/connections", flash{Text: connectionProblem(name, err)})
		return
	}
	c.log.Info("console: OAuth login started", "upstream", name, "principal", u.name())
	c.render(w, r, u, http.StatusOK, "continue", "Connect "+name, continueView{Upstream: name, URL: f.URL})
}

func (c *Console) disconnect(w http.ResponseWriter, r *http.Request, u *user) {
	name, who := r.PostFormValue("name"), u.name()
	if c.opts.Connections == nil || name == "" {
		c.back(w, r, "/connections", flash{Text: "Choose a connection to remove."})
		return
	}
	if p := r.PostFormValue("principal"); p != "" && p != who {
		if !u.admin() {
			c.back(w, r, "/connections", flash{Text: "Only an admin removes another principal's connection."})
			return
		}
		who = p
	}
	ctx, cancel := timeout(r)
	defer cancel()
	revoked, err := c.opts.Connections.Disconnect(ctx, who, name)
	if err != nil {
		c.back(w, r, "/connections", flash{Text: connectionProblem(name, err)})
		return
	}
	text := fmt.Sprintf("Disconnected %s.", name)
	if revoked {
		text = fmt.Sprintf("Disconnected %s and revoked its tokens at the authorization server.", name)
	}
	c.back(w, r, "/connections", flash{OK: true, Text: text})
}

func connectionProblem(name string, err error) string {
	switch {
	case errors.Is(err, oauthclient.ErrUnknownUpstream):
		return fmt.Sprintf("%q is not an MCP server with an \"oauth\" section in this server's config.", name)
	case errors.Is(err, oauthclient.ErrNoConnection):
		return fmt.Sprintf("There is no connection to %q to remove.", name)
	}
	return "Nothing was changed: " + err.Error() + "."
}

// WrapCallback is the OAuth callback (/oauth/callback) for people using
// the console: a login that ends well and whose browser has a console
// session comes back to /connections, which lists the new connection;
// every other answer (a failure, a caller without a session, an agent's
// user) is the callback's own page.
func (c *Console) WrapCallback(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := c.userOf(r); err != nil {
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(&returnWriter{ResponseWriter: w, c: c, r: r}, r)
	})
}

// returnWriter turns the callback's success page into a redirect to
// /connections with a message, and passes every other answer on.
type returnWriter struct {
	http.ResponseWriter
	c        *Console
	r        *http.Request
	wrote    bool
	redirect bool
}

func (rw *returnWriter) WriteHeader(code int) {
	if rw.wrote {
		return
	}
	rw.wrote = true
	if code != http.StatusOK {
		rw.ResponseWriter.WriteHeader(code)
		return
	}
	rw.redirect = true
	rw.ResponseWriter.Header().Del("Content-Type")
	rw.c.back(rw.ResponseWriter, rw.r, "/connections", flash{OK: true, Text: "Connected: the login at the upstream finished."})
}

func (rw *returnWriter) Write(b []byte) (int, error) {
	if !rw.wrote {
		rw.WriteHeader(http.StatusOK)
	}
	if rw.redirect {
		return len(b), nil
	}
	return rw.ResponseWriter.Write(b)
}
