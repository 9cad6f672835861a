package console

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/toolnexus/toolnexus/internal/auth"
	"github.com/toolnexus/toolnexus/internal/vault"
)

// A login is a record in the store under the SHA-256 of its cookie's
// value: the store never holds a live cookie, and the record holds no
// token, only what the login proved (a static token's name, or the
// issuer and the two claims of an OIDC identity). The principal is found
// again from it on every request, with the config in force.

// The ways a person logged in.
const (
	methodToken = "token" // a static token of auth.tokens
	methodOIDC  = "oidc"  // server.web.oidc
	methodOpen  = "open"  // auth is off: every caller is trusted, as on gRPC
)

// login is a session's record.
type login struct {
	Method string `json:"method"`
	// Name is the static token's name (methodToken).
	Name string `json:"name,omitempty"`
	// Issuer and Claims are the OIDC identity (methodOIDC).
	Issuer string            `json:"issuer,omitempty"`
	Claims auth.PersonClaims `json:"claims"`
	// CSRF is the token every form of this session carries.
	CSRF    string    `json:"csrf"`
	Created time.Time `json:"created"`
	Expires time.Time `json:"expires"`
}

// user is the person behind a request.
type user struct {
	key   string // the session's store key
	login login
	// p is the principal, nil when auth is off.
	p *auth.Principal
}

// name is how the person is shown and what the core knows them by ("" when
// auth is off).
func (u *user) name() string {
	if u.p == nil {
		return ""
	}
	return u.p.Name
}

// admin reports whether the person may act for everyone, as
// grpcapi's caller(): an admin token, or anyone while auth is off.
func (u *user) admin() bool { return u.p == nil || u.p.Admin }

// shown is the name the header shows.
func (u *user) shown() string {
	if u.p == nil {
		return "anonymous (auth is off)"
	}
	return u.p.Name
}

const sessionPrefix = "console/session/"

// cookieName is the session cookie's name.
func (c *Console) cookieName() string { return c.named("toolnexus-session") }

// named is a cookie's name: __Host- under HTTPS, so no other host (a
// sibling subdomain) or path can set or shadow it.
func (c *Console) named(base string) string {
	if c.https() {
		return "__Host-" + base
	}
	return base
}

func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand does not fail on Linux
	return base64.RawURLEncoding.EncodeToString(b)
}

func storeKey(prefix, secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return prefix + hex.EncodeToString(sum[:])
}

// startSession makes a fresh session for l and sets its cookie. The id is
// always new: a cookie the browser had before the login (planted by
// someone else, or the person's own) never becomes a logged-in session.
func (c *Console) startSession(ctx context.Context, w http.ResponseWriter, r *http.Request, l login) error {
	c.endSession(ctx, w, r)
	ttl := c.opts.Core.Config().Server.Web.SessionTTL()
	now := time.Now()
	l.CSRF, l.Created, l.Expires = randomToken(), now, now.Add(ttl)
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	id := randomToken()
	if err := c.opts.Store.Put(ctx, storeKey(sessionPrefix, id), b, ttl); err != nil {
		return err
	}
	http.SetCookie(w, c.cookie(c.cookieName(), id, ttl))
	return nil
}

// cookie is one of the console's cookies: HttpOnly, SameSite=Lax (the
// OIDC callback is a top-level GET from the provider, which Lax lets
// through; a cross-site POST carries none), Secure under HTTPS, on "/".
func (c *Console) cookie(name, value string, ttl time.Duration) *http.Cookie {
	ck := &http.Cookie{Name: name, Value: value, Path: "/", HttpOnly: true, Secure: c.https(), SameSite: http.SameSiteLaxMode}
	if ttl < 0 {
		ck.MaxAge = -1
	} else {
		ck.MaxAge = int(ttl / time.Second)
	}
	return ck
}

// endSession forgets the request's session, if any, and clears its cookie.
func (c *Console) endSession(ctx context.Context, w http.ResponseWriter, r *http.Request) {
	ck, err := r.Cookie(c.cookieName())
	if err != nil || ck.Value == "" {
		return
	}
	_, _ = c.opts.Store.Delete(ctx, storeKey(sessionPrefix, ck.Value))
	http.SetCookie(w, c.cookie(c.cookieName(), "", -1))
}

// errNoSession is a request without a live session.
var errNoSession = errors.New("no session")

// userOf finds the request's person: the session its cookie names, not
// expired, whose login still holds under the config in force (a removed
// token, an issuer taken out of auth.oidc, auth turned on or off end it).
func (c *Console) userOf(r *http.Request) (*user, error) {
	ck, err := r.Cookie(c.cookieName())
	if err != nil || ck.Value == "" {
		return nil, errNoSession
	}
	key := storeKey(sessionPrefix, ck.Value)
	ctx, cancel := timeout(r)
	defer cancel()
	b, err := c.opts.Store.Get(ctx, key)
	if errors.Is(err, vault.ErrNotFound) {
		return nil, errNoSession
	}
	if err != nil {
		return nil, err
	}
	u := &user{key: key}
	if json.Unmarshal(b, &u.login) != nil || !time.Now().Before(u.login.Expires) {
		return nil, errNoSession
	}
	if u.p, err = c.principalOf(u.login); err != nil {
		return nil, errNoSession
	}
	return u, nil
}

// principalOf is the principal a login proves now.
func (c *Console) principalOf(l login) (*auth.Principal, error) {
	au := c.opts.Core.Authenticator()
	switch {
	case au == nil && l.Method == methodOpen:
		return nil, nil
	case au == nil:
		return nil, errNoSession
	case l.Method == methodToken:
		if p := au.StaticPrincipal(l.Name); p != nil {
			return p, nil
		}
	case l.Method == methodOIDC:
		return au.PersonPrincipal(l.Issuer, l.Claims)
	}
	return nil, errNoSession
}
