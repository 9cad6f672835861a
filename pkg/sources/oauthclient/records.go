package oauthclient

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/toolnexus/toolnexus/internal/vault"
)

// The vault's records, by name. Names never hold a token or a login's
// state (a state is known by its hash); an upstream or principal name is
// path-escaped so neither can reach into the other's part.
//
//	conn/<upstream>/<principal>   a caller's connection: its tokens
//	source/<upstream>             which connection lists the upstream's tools
//	client/<upstream>/<hash>      the client toolnexus registered (issuer + redirect URI)
//	flow/<hash of state>          a login in progress (single use, expires)
//	done/<flow id>                how a login ended, for whoever waits on it
func connKey(upstream, principal string) string {
	return "conn/" + url.PathEscape(upstream) + "/" + url.PathEscape(principal)
}

// parseConnKey splits a conn/ name; ok is false for any other name.
func parseConnKey(key string) (upstream, principal string, ok bool) {
	rest, ok := strings.CutPrefix(key, "conn/")
	if !ok {
		return "", "", false
	}
	u, p, ok := strings.Cut(rest, "/")
	if !ok {
		return "", "", false
	}
	up, err1 := url.PathUnescape(u)
	pr, err2 := url.PathUnescape(p)
	return up, pr, err1 == nil && err2 == nil
}

func sourceKey(upstream string) string { return "source/" + url.PathEscape(upstream) }

func clientKey(upstream, issuer, redirect string) string {
	return "client/" + url.PathEscape(upstream) + "/" + hash(issuer + "\x00" + redirect)[:32]
}

func flowKey(state string) string { return "flow/" + hash(state) }

func doneKey(flowID string) string { return "done/" + flowID }

func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// connection is a caller's connection record.
type connection struct {
	Principal    string    `json:"principal"`
	Upstream     string    `json:"upstream"`
	AccessToken  string    `json:"access_token"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"` // zero: the server gave no lifetime
	Scope        string    `json:"scope,omitempty"`
	Issuer       string    `json:"issuer"`
	// ClientKey names the client record (or the configured client) the
	// tokens were issued to: a refresh or a revocation must use it.
	ClientKey   string    `json:"client_key"`
	CreatedAt   time.Time `json:"created_at"`
	RefreshedAt time.Time `json:"refreshed_at,omitzero"`
}

// sourceRecord says whose connection an upstream's tools are listed with.
type sourceRecord struct {
	Principal string `json:"principal"`
}

// clientRecord is a client toolnexus registered (RFC 7591), kept so every
// replica and every restart uses the same one.
type clientRecord struct {
	ClientID     string    `json:"client_id"`
	ClientSecret string    `json:"client_secret,omitempty"`
	AuthMethod   string    `json:"auth_method,omitempty"`
	Issuer       string    `json:"issuer"`
	RedirectURI  string    `json:"redirect_uri"`
	RegisteredAt time.Time `json:"registered_at"`
}

// flowRecord is a login in progress: everything the callback needs, on
// whichever replica the browser lands.
type flowRecord struct {
	ID        string    `json:"id"`
	Principal string    `json:"principal"`
	Upstream  string    `json:"upstream"`
	Verifier  string    `json:"verifier"`
	Issuer    string    `json:"issuer"`
	ClientKey string    `json:"client_key"`
	Redirect  string    `json:"redirect"`
	Resource  string    `json:"resource"`
	Scopes    []string  `json:"scopes,omitempty"`
	Expires   time.Time `json:"expires"`
	// Connect marks an admin's `toolnexus connect`: the connection also
	// becomes the one the upstream's tools are listed with.
	Connect bool `json:"connect,omitempty"`
}

// doneRecord is how a login ended.
type doneRecord struct {
	Error string `json:"error,omitempty"`
}

// doneTTL is how long a login's outcome stays readable.
const doneTTL = 30 * time.Minute

func putJSON(ctx context.Context, v *vault.Vault, key string, rec any, ttl time.Duration) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return v.Put(ctx, key, b, ttl)
}

// getJSON reads a record into rec; found is false (and err nil) when
// there is none.
func getJSON(ctx context.Context, v *vault.Vault, key string, rec any) (found bool, err error) {
	b, err := v.Get(ctx, key)
	if errors.Is(err, vault.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, json.Unmarshal(b, rec)
}
