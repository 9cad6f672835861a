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
	"log/slog"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/toolnexus/toolnexus/internal/callerctx"
	"github.com/toolnexus/toolnexus/internal/config"
)

// Principal is an authenticated caller: a named token or a JWT's subject,
// with an optional allowlist of tools and the admin right.
type Principal struct {
	// Name is the token's name from auth.tokens, or the value of a JWT's
	// principal claim — "NAME:value" when its issuer has a name in
	// auth.oidc — it is what logs, metrics, sessions, approvals, limits,
	// policies and the audit trail use, never the token itself.
	Name string
	// Admin may call the admin RPCs (Reload, other principals' sessions).
	Admin bool
	// Groups are the caller's groups: a static token's auth.tokens groups,
	// or a JWT's groups claim (all of it, matched in auth.groups or not).
	Groups []string
	// Issuer is the auth.oidc issuer of a JWT caller; empty for a static
	// token.
	Issuer string
	// patterns are the token's tool globs; nil allows everything.
	patterns []string
	// resources and prompts are its feature globs (features.go).
	resources, prompts []string
	// token is the verified JWT, kept only so it can be exchanged for an
	// upstream's token (BearerToken); String and GoString hide it.
	token string
}

// String is the name: a principal printed by accident shows no token.
func (p *Principal) String() string { return p.Name }

// GoString is the name too, for %#v.
func (p *Principal) GoString() string { return "auth.Principal{" + p.Name + "}" }

// BearerToken is the caller's verified JWT, for an RFC 8693 token
// exchange; empty for a static token. Never log or forward it.
func (p *Principal) BearerToken() string {
	if p == nil {
		return ""
	}
	return p.token
}

// NewPrincipal makes a principal; patterns nil (not empty) allows every tool.
func NewPrincipal(name string, patterns []string, admin bool) *Principal {
	return &Principal{Name: name, Admin: admin, patterns: slices.Clone(patterns)}
}

// Restricted reports whether the principal has an allowlist.
func (p *Principal) Restricted() bool { return p != nil && p.patterns != nil }

// ViewKey names what the principal may see, for caches of what one view
// of the registry shows (a search index): principals with the same
// allowlist share a key, and one that allows everything (or a nil one, auth
// off) has "*".
func (p *Principal) ViewKey() string {
	if p == nil || p.patterns == nil {
		return "*"
	}
	return "allow\x00" + strings.Join(p.patterns, "\x00")
}

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

// Authenticator checks bearer tokens: static tokens, compared as SHA-256
// digests in constant time so neither timing nor length reveals one, and
// JWTs from the auth.oidc issuers, verified once and then cached by digest
// until they expire.
type Authenticator struct {
	tokens  []token
	issuers []*issuer
	cache   *tokenCache
	failed  func(Reason)
	now     func() time.Time
}

// Options are what an Authenticator needs beyond its config.
type Options struct {
	// Logger reports an identity provider going down and back up.
	Logger *slog.Logger
	// Failed counts a refused credential (toolnexus_auth_failures_total).
	Failed func(Reason)
	// GroupsUnmatched counts a verified JWT none of whose groups is an
	// auth.groups entry (toolnexus_auth_groups_unmatched_total).
	GroupsUnmatched func()
	// HTTPClient fetches discovery documents and keys; nil = a default.
	HTTPClient *http.Client
	// RefetchInterval is the least time between two key fetches from one
	// issuer; 0 = DefaultRefetchInterval.
	RefetchInterval time.Duration
}

// DefaultRefetchInterval rate-limits key fetches caused by unknown key ids.
const DefaultRefetchInterval = time.Second

type token struct {
	digest [32]byte
	p      *Principal
}

// New builds the authenticator for the auth config, or nil when auth is off.
// Each issuer's keys are fetched before it returns; an issuer that does not
// answer is logged once and retried when its tokens arrive.
func New(a config.Auth, opts Options) *Authenticator {
	if !a.Enabled() {
		return nil
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.HTTPClient == nil {
		// Fetches are rare (start, rotation), so no connection is kept
		// open: nothing lingers once the authenticator is replaced.
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.DisableKeepAlives = true
		opts.HTTPClient = &http.Client{Timeout: fetchTimeout, Transport: tr}
	}
	if opts.RefetchInterval <= 0 {
		opts.RefetchInterval = DefaultRefetchInterval
	}
	au := &Authenticator{failed: opts.Failed, now: time.Now}
	taken := takenNames(a)
	for _, t := range a.Tokens {
		p := NewPrincipal(t.Name, t.Tools, t.Admin)
		if t.Resources != nil || t.Prompts != nil {
			p = p.WithFeatures(t.Resources, t.Prompts)
		}
		if len(t.Groups) > 0 {
			p = withGroups(p, t.Groups, a.Groups)
		}
		au.tokens = append(au.tokens, token{digest: sha256.Sum256([]byte(t.Value)), p: p})
	}
	if len(a.OIDC) > 0 {
		au.cache = new(tokenCache)
	}
	for _, c := range a.OIDC {
		is := newIssuer(c, a, opts.HTTPClient, opts.Logger, opts.RefetchInterval)
		is.taken = taken
		is.unmatched = unmatchedReporter(c.Issuer, a.Groups, opts)
		is.keys.removed = au.cache.dropSignedBy
		is.keys.refresh(context.Background()) // at start, before any call
		au.issuers = append(au.issuers, is)
	}
	return au
}

// takenNames reports the bare names an unnamed issuer's subject may not
// take: static tokens' names, and "NAME:…" of a named issuer — else that
// issuer's users could sign in as a static token's principal (its sessions,
// approvals, limits and policies) or as another issuer's.
func takenNames(a config.Auth) func(string) bool {
	static := make(map[string]bool, len(a.Tokens))
	for _, t := range a.Tokens {
		static[t.Name] = true
	}
	named := map[string]bool{}
	for _, c := range a.OIDC {
		if c.Name != "" {
			named[c.Name] = true
		}
	}
	return func(name string) bool {
		if static[name] {
			return true
		}
		prefix, _, ok := strings.Cut(name, config.PrincipalSeparator)
		return ok && named[prefix]
	}
}

// Check finds the principal of a token. Every static token is compared,
// match or not; a JWT is looked up in the cache and verified on a miss.
// ctx bounds the wait for an issuer's keys when the token names a key not
// yet fetched.
func (a *Authenticator) Check(ctx context.Context, tok string) (*Principal, error) {
	// Hashed in place: converting a JWT-sized string to []byte would copy
	// it to the heap on every call.
	d := sha256.Sum256(unsafe.Slice(unsafe.StringData(tok), len(tok)))
	var found *Principal
	for i := range a.tokens {
		if subtle.ConstantTimeCompare(d[:], a.tokens[i].digest[:]) == 1 {
			found = a.tokens[i].p
		}
	}
	if found != nil {
		return found, nil
	}
	r := ReasonUnknownToken
	if a.cache != nil {
		now := a.now()
		ns := now.UnixNano()
		for _, is := range a.issuers {
			is.keys.refreshIfDue(ctx, ns)
		}
		if p := a.cache.get(&d, ns); p != nil {
			return p, nil
		}
		var p *Principal
		if p, r = a.verifyJWT(ctx, tok, &d, now); p != nil {
			return p, nil
		}
	}
	a.count(r)
	return nil, refusal(r)
}

// verifyJWT checks a token that is not a static one against the issuer its
// "iss" names, and caches it when valid.
func (a *Authenticator) verifyJWT(ctx context.Context, tok string, d *[32]byte, now time.Time) (*Principal, Reason) {
	h, payload, ok := splitJWT(tok)
	if !ok {
		return nil, ReasonUnknownToken
	}
	if strings.EqualFold(h.Alg, "none") {
		return nil, ReasonAlgNone
	}
	iss := unverifiedIssuer(payload)
	for _, is := range a.issuers {
		if is.cfg.Issuer != iss {
			continue
		}
		v, r := is.verify(ctx, tok, h, now)
		if r != ReasonNone {
			return nil, r
		}
		a.cache.put(d, v, is.keys)
		if !is.keys.lists(v.thumb) {
			// The key left the set while the token was being verified,
			// after the sweep that would have dropped it: drop it here.
			a.cache.dropSignedBy(is.keys, map[string]bool{v.thumb: true})
		}
		return v.p, ReasonNone
	}
	return nil, ReasonWrongIssuer
}

func (a *Authenticator) count(r Reason) {
	if a.failed != nil {
		a.failed(r)
	}
}

// CheckHeader is Check for an "Authorization"-style value: "Bearer X"
// (either case of the scheme). An empty value is ErrMissing.
func (a *Authenticator) CheckHeader(ctx context.Context, value string) (*Principal, error) {
	if value == "" {
		a.count(ReasonMissing)
		return nil, ErrMissing
	}
	tok, ok := strings.CutPrefix(value, "Bearer ")
	if !ok {
		tok, ok = strings.CutPrefix(value, "bearer ")
	}
	if !ok {
		a.count(ReasonMalformed)
		return nil, ErrMalformed
	}
	return a.Check(ctx, tok)
}

// With returns ctx carrying the caller.
func With(ctx context.Context, p *Principal) context.Context {
	return callerctx.With(ctx, p)
}

// From returns the caller, or nil when auth is off.
func From(ctx context.Context) *Principal {
	p, _ := callerctx.From(ctx).(*Principal)
	return p
}
