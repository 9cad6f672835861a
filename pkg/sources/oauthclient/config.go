package oauthclient

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/toolnexus/toolnexus/pkg/sources/field"
)

// Config is an upstream's "oauth" object: each caller connects its own
// account at the upstream's authorization server. Every field is
// optional: without clientId, toolnexus registers itself (a Client ID
// Metadata Document where the server supports one, else RFC 7591 dynamic
// registration). ClientSecret keeps its ${VAR} / ${file:…} reference as
// written (configs are fingerprinted; an expanded secret must never sit in
// one); NewUpstream expands it.
type Config struct {
	ClientID     string   `json:"clientId,omitempty"`
	ClientSecret string   `json:"clientSecret,omitempty"`
	Scopes       []string `json:"scopes,omitempty"`
}

var keys = []string{"clientId", "clientSecret", "scopes"}

// Parse reads the "oauth" key of obj (at names obj in errors); nil when it
// is not set. "oauth": {} and "oauth": true both turn it on with every
// default.
func Parse(at string, obj field.Object) (*Config, error) {
	raw, ok := obj.Get("oauth")
	if !ok {
		return nil, nil
	}
	at = field.Join(at, "oauth")
	var on bool
	if err := json.Unmarshal(raw, &on); err == nil {
		if !on {
			return nil, nil
		}
		return &Config{}, nil
	}
	m, ok := field.ParseObject(raw)
	if !ok {
		return nil, field.Errorf(at, "must be an object such as {} or {\"clientId\": \"…\", \"clientSecret\": \"${file:/run/secrets/x}\", \"scopes\": [\"repo\"]}")
	}
	if unknown := m.Unknown(keys); len(unknown) > 0 {
		return nil, field.Errorf(field.Join(at, unknown[0]), "unknown key (known: %s)", strings.Join(keys, ", "))
	}
	var c Config
	var err error
	if c.ClientID, err = m.String(at, "clientId", false); err != nil {
		return nil, err
	}
	if c.ClientSecret, err = m.String(at, "clientSecret", false); err != nil {
		return nil, err
	}
	if c.ClientSecret != "" && c.ClientID == "" {
		return nil, field.Errorf(at+".clientSecret", "a client secret needs the clientId it belongs to")
	}
	if _, err := m.Decode(at, "scopes", &c.Scopes, "must be an array of scope names, e.g. [\"repo\", \"read:user\"]"); err != nil {
		return nil, err
	}
	for i, s := range c.Scopes {
		if s == "" || strings.ContainsAny(s, " \"\\") {
			return nil, field.Errorf(field.Join(at, "scopes")+"["+strconv.Itoa(i)+"]", "%q is not a scope name (no spaces or quotes)", s)
		}
	}
	return &c, nil
}
