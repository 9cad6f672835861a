package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/config"
)

const oidcIssuers = `"auth": {"oidc": [{"issuer": "https://idp.test", "audience": "tn", "name": "corp"}, {"issuer": "https://other.test", "audience": "tn"}]}`

// Every mistake in the console's keys of server.web is an error naming
// the key.
func TestConsoleErrorsNameTheKey(t *testing.T) {
	for _, c := range []struct{ cfg, key, want string }{
		{`{"server": {"web": {"sessionTimeout": 1000}}}`, "server.web.sessionTimeout", "at least 60000"},
		{`{"server": {"web": {"console": "yes"}}}`, "server.web.console", ""},
		{`{"server": {"web": {"oidc": {"clientSecret": "x"}}}}`, "server.web.oidc.clientId", "is required"},
		{`{"server": {"web": {"oidc": {"clientId": "c", "clientid": "x"}}}}`, "server.web.oidc.clientid", "unknown"},
		{`{"server": {"web": {"oidc": {"clientId": "c"}}}}`, "server.web.oidc", "needs auth.oidc"},
		{`{` + oidcIssuers + `, "server": {"web": {"oidc": {"clientId": "c"}}}}`, "server.web.oidc.issuer", "is required with 2 issuers"},
		{`{` + oidcIssuers + `, "server": {"web": {"oidc": {"clientId": "c", "issuer": "https://evil.test"}}}}`, "server.web.oidc.issuer", "is not an issuer of auth.oidc"},
	} {
		_, err := config.Parse([]byte(c.cfg), "", "/cfg")
		if err == nil || !strings.HasPrefix(err.Error(), "config: "+c.key+": ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s\n got %v\nwant config: %s: …%s…", c.cfg, err, c.key, c.want)
		}
	}
}

func TestConsoleConfigRead(t *testing.T) {
	cfg, err := config.Parse([]byte(`{`+oidcIssuers+`, "server": {"web": {"listen": "127.0.0.1:8090", "sessionTimeout": 3600000,
		"oidc": {"issuer": "https://idp.test", "clientId": "console", "clientSecret": "${CONSOLE_SECRET_FOR_TEST}"}}}}`), "", "/cfg")
	if err != nil {
		t.Fatal(err)
	}
	w := cfg.Server.Web
	if !w.ConsoleOn() || w.SessionTTL() != time.Hour || w.OIDC.Name != "corp" || strings.Join(w.OIDC.Scopes, " ") != "openid" {
		t.Fatalf("%+v %+v", w, w.OIDC)
	}
	if _, err := cfg.ConsoleSecret(); err == nil || !strings.Contains(err.Error(), "server.web.oidc.clientSecret") || cfg.CheckRefs() == nil {
		t.Fatalf("an unset secret variable: %v", err)
	}
	t.Setenv("CONSOLE_SECRET_FOR_TEST", "s3cret")
	if s, err := cfg.ConsoleSecret(); err != nil || s != "s3cret" || cfg.CheckRefs() != nil {
		t.Fatalf("secret %q %v", s, err)
	}
	off, err := config.Parse([]byte(`{"server": {"web": {"listen": "127.0.0.1:8090", "console": false}}}`), "", "/cfg")
	if err != nil || off.Server.Web.ConsoleOn() || off.Server.Web.SessionTTL() != config.DefaultConsoleSession {
		t.Fatalf("console false: %v %+v", err, off.Server.Web)
	}
	named, err := config.Parse([]byte(`{"auth": {"oidc": [{"issuer": "https://login.example.com", "audience": "tn"}]}, "server": {"web": {"oidc": {"clientId": "c"}}}}`), "", "/cfg")
	if err != nil || named.Server.Web.OIDC.Issuer != "https://login.example.com" || named.Server.Web.OIDC.Name != "login.example.com" {
		t.Fatalf("the only issuer: %v %+v", err, named.Server.Web.OIDC)
	}
}
