package config

import (
	"net/url"
	"time"

	"github.com/toolnexus/toolnexus/pkg/sources"
)

// The console's settings, inside server.web (internal/console).

// DefaultConsoleSession is how long a console login lasts unless
// server.web.sessionTimeout says otherwise: a working day.
const DefaultConsoleSession = 8 * time.Hour

// WebOIDC is server.web.oidc: the console's "Log in with <provider>",
// an OpenID Connect login (authorization code with PKCE) at one of the
// auth.oidc issuers, as a client registered there.
type WebOIDC struct {
	// Issuer is the auth.oidc issuer to log in at; empty = the only one.
	Issuer string `json:"issuer"`
	// Name is what the button says: "Log in with <Name>"; empty = the
	// issuer's name in auth.oidc, else its host.
	Name string `json:"name"`
	// ClientID and ClientSecret are the console's client at the issuer
	// (a secret may be ${VAR} or ${file:/path}; empty = a public client).
	ClientID     string `json:"clientId"`
	ClientSecret string `json:"clientSecret"`
	// Scopes asked for; default ["openid"] (add the one that puts the
	// groups claim in the ID token, e.g. "groups", where the provider
	// needs one).
	Scopes []string `json:"scopes"`
}

// ConsoleOn reports whether the console's pages are served: whenever the
// web listener is, unless server.web.console is false.
func (w Web) ConsoleOn() bool { return w.Listen != "" && (w.Console == nil || *w.Console) }

// SessionTTL is how long a console login lasts.
func (w Web) SessionTTL() time.Duration {
	if w.SessionTimeoutMS > 0 {
		return time.Duration(w.SessionTimeoutMS) * time.Millisecond
	}
	return DefaultConsoleSession
}

// checkConsoleKeys checks the console's keys of server.web on their own.
func (w *Web) checkConsoleKeys() error {
	if w.SessionTimeoutMS != 0 && w.SessionTimeoutMS < 60000 {
		return keyErr("server.web.sessionTimeout", "must be at least 60000 (ms, one minute); the default is %d (8 hours)", DefaultConsoleSession.Milliseconds())
	}
	if o := w.OIDC; o != nil {
		if o.ClientID == "" {
			return keyErr("server.web.oidc.clientId", "is required: the console's client id at the identity provider (register a web client whose redirect URI is the web listener's /login/oidc/callback)")
		}
		if len(o.Scopes) == 0 {
			o.Scopes = []string{"openid"}
		}
	}
	return nil
}

// checkConsole is the rule across sections: the console's OIDC login is
// at an issuer auth.oidc trusts, which then also decides who the person
// is (principal claim, groups), as for that issuer's tokens on gRPC.
func checkConsole(cfg *Config) error {
	o := cfg.Server.Web.OIDC
	if o == nil {
		return nil
	}
	if len(cfg.Auth.OIDC) == 0 {
		return keyErr("server.web.oidc", "needs auth.oidc: the console logs people in at one of the issuers toolnexus trusts (add the issuer to auth.oidc, or remove server.web.oidc)")
	}
	if o.Issuer == "" {
		if len(cfg.Auth.OIDC) > 1 {
			return keyErr("server.web.oidc.issuer", "is required with %d issuers in auth.oidc: name the one to log in at", len(cfg.Auth.OIDC))
		}
		o.Issuer = cfg.Auth.OIDC[0].Issuer
	}
	var iss *OIDCIssuer
	for i := range cfg.Auth.OIDC {
		if cfg.Auth.OIDC[i].Issuer == o.Issuer {
			iss = &cfg.Auth.OIDC[i]
		}
	}
	if iss == nil {
		return keyErr("server.web.oidc.issuer", "%q is not an issuer of auth.oidc", o.Issuer)
	}
	if o.Name == "" {
		o.Name = iss.Name
	}
	if o.Name == "" {
		if u, err := url.Parse(o.Issuer); err == nil && u.Host != "" {
			o.Name = u.Host
		} else {
			o.Name = o.Issuer
		}
	}
	return nil
}

// ConsoleSecret is server.web.oidc.clientSecret with its ${VAR} or
// ${file:…} resolved ("" for a public client); an unresolved reference is
// an *Error naming the key, which --check and a start both refuse.
func (c *Config) ConsoleSecret() (string, error) {
	o := c.Server.Web.OIDC
	if o == nil || o.ClientSecret == "" {
		return "", nil
	}
	v, err := sources.ExpandEnv(o.ClientSecret)
	if err != nil {
		return "", &Error{Key: "server.web.oidc.clientSecret", Msg: err.Error() + "; the console's login needs it: set the variable in the server's environment or mount the file"}
	}
	return v, nil
}

func (c *Config) checkConsoleRefs() error {
	_, err := c.ConsoleSecret()
	return err
}
