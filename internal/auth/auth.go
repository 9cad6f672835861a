// Package auth decides who a caller is and what it may use, without knowing
// any protocol: a front-end takes the bearer token off its wire (gRPC
// metadata, an HTTP header), asks an Authenticator for the Principal, and
// maps the typed errors here onto its own status codes and texts.
package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"path"
	"slices"
	"strings"

	"github.com/toolnexus/toolnexus/internal/config"
)

// Principal is an authenticated caller: a named token with an optional
// allowlist of tools and the admin right.
type Principal struct {
	// Name is the token's name from auth.tokens; it is what logs, metrics
	// and the audit trail show, never the token itself.
	Name string
	// Admin may call the admin RPCs (Reload, other principals' sessions).
	Admin bool
	// Groups are the groups the identity provider puts the caller in
	// (Cedar policies see them as the principal's parents).
	Groups []string
	// patterns are the token's tool globs; nil allows everything.
	patterns []string
}

// NewPrincipal makes a principal; patterns nil (not empty) allows every tool.
func NewPrincipal(name string, patterns []string, admin bool) *Principal {
	return &Principal{Name: name, Admin: admin, patterns: slices.Clone(patterns)}
}

// Restricted reports whether the principal has an allowlist.
func (p *Principal) Restricted() bool { return p != nil && p.patterns != nil }

// Allows reports whether the caller may see and run a tool. A pattern
// matches the tool name, or with a "source:" prefix the tool's source. A nil
// principal (auth off) allows everything.
func (p *Principal) Allows(name, source string) bool {
	if p == nil || p.patterns == nil {
		return true
	}
	for _, pat := range p.patterns {
		if s, ok := strings.CutPrefix(pat, "source:"); ok {
			if m, _ := path.Match(s, source); m {
				return true
			}
			continue
		}
		if m, _ := path.Match(pat, name); m {
			return true
		}
	}
	return false
}

// The ways a credential is refused. Front-ends turn them into their own
// status (gRPC UNAUTHENTICATED, HTTP 401) and words.
var (
	ErrMissing   = errors.New("missing bearer token")
	ErrMalformed = errors.New(`malformed authorization: expected "Bearer <token>"`)
	ErrInvalid   = errors.New("invalid bearer token")
)

// Authenticator checks bearer tokens. Tokens are compared as SHA-256
// digests in constant time, so neither timing nor length reveals a token.
type Authenticator struct {
	tokens []token
}

type token struct {
	digest [32]byte
	p      *Principal
}

// New builds the authenticator for the auth config, or nil when auth is off.
func New(a config.Auth) *Authenticator {
	if !a.Enabled() {
		return nil
	}
	au := &Authenticator{}
	for _, t := range a.Tokens {
		au.tokens = append(au.tokens, token{digest: sha256.Sum256([]byte(t.Value)), p: NewPrincipal(t.Name, t.Tools, t.Admin)})
	}
	return au
}

// Check finds the principal of a token. Every token is compared, match or
// not.
func (a *Authenticator) Check(tok string) (*Principal, error) {
	d := sha256.Sum256([]byte(tok))
	var found *Principal
	for i := range a.tokens {
		if subtle.ConstantTimeCompare(d[:], a.tokens[i].digest[:]) == 1 {
			found = a.tokens[i].p
		}
	}
	if found == nil {
		return nil, ErrInvalid
	}
	return found, nil
}

// CheckHeader is Check for an "Authorization"-style value: "Bearer X"
// (either case of the scheme). An empty value is ErrMissing.
func (a *Authenticator) CheckHeader(value string) (*Principal, error) {
	if value == "" {
		return nil, ErrMissing
	}
	tok, ok := strings.CutPrefix(value, "Bearer ")
	if !ok {
		tok, ok = strings.CutPrefix(value, "bearer ")
	}
	if !ok {
		return nil, ErrMalformed
	}
	return a.Check(tok)
}

type principalKey struct{}

// With returns ctx carrying the caller.
func With(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// From returns the caller, or nil when auth is off.
func From(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	return p
}
