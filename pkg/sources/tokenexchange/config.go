// Package tokenexchange gives an upstream (an HTTP tool, an OpenAPI
// operation) the caller's identity without passing the caller's token
// through: the caller's verified JWT is exchanged at the identity provider
// (RFC 8693) for a token meant for that upstream, cached per caller and
// upstream until it expires, and sent as "Authorization: Bearer".
package tokenexchange

import (
	"net/url"
	"strings"

	"github.com/toolnexus/toolnexus/pkg/sources/field"
)

// Config is a source's tokenExchange object. ClientSecret keeps its
// ${VAR} / ${file:…} reference as written (the server fingerprints configs;
// an expanded secret must never sit in one); New expands it.
type Config struct {
	TokenURL     string `json:"tokenUrl"`
	ClientID     string `json:"clientId"`
	ClientSecret string `json:"clientSecret,omitempty"`
	Audience     string `json:"audience,omitempty"`
	Scope        string `json:"scope,omitempty"`
}

var keys = []string{"tokenUrl", "clientId", "clientSecret", "audience", "scope"}

// Parse reads the "tokenExchange" key of obj (at names obj in errors); nil
// when it is not set.
func Parse(at string, obj field.Object) (*Config, error) {
	raw, ok := obj.Get("tokenExchange")
	if !ok {
		return nil, nil
	}
	at = field.Join(at, "tokenExchange")
	m, ok := field.ParseObject(raw)
	if !ok {
		return nil, field.Errorf(at, "must be an object {\"tokenUrl\": …, \"clientId\": …, \"clientSecret\": \"${file:/run/secrets/x}\", \"audience\": …}")
	}
	if unknown := m.Unknown(keys); len(unknown) > 0 {
		return nil, field.Errorf(field.Join(at, unknown[0]), "unknown key (known: %s)", strings.Join(keys, ", "))
	}
	var c Config
	var err error
	if c.TokenURL, err = m.String(at, "tokenUrl", true); err != nil {
		return nil, err
	}
	if u, perr := url.Parse(c.TokenURL); perr != nil || u.Host == "" || (u.Scheme != "https" && !(u.Scheme == "http" && loopback(u.Hostname()))) {
		return nil, field.Errorf(at+".tokenUrl", "must be an https URL (http only on loopback), e.g. \"https://login.example.com/oauth2/token\" (got %q)", c.TokenURL)
	}
	if c.ClientID, err = m.String(at, "clientId", true); err != nil {
		return nil, err
	}
	for _, k := range []struct {
		key string
		v   *string
	}{{"clientSecret", &c.ClientSecret}, {"audience", &c.Audience}, {"scope", &c.Scope}} {
		if *k.v, err = m.String(at, k.key, false); err != nil {
			return nil, err
		}
	}
	if c.Audience == "" && c.Scope == "" {
		return nil, field.Errorf(at+".audience", "set audience (the upstream's identifier at the provider) or scope, so the token is meant for this upstream")
	}
	return &c, nil
}

func loopback(h string) bool { return h == "localhost" || h == "127.0.0.1" || h == "::1" }
