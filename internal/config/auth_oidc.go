package config

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"path"
	"slices"
	"sort"
	"strings"
	"time"
)

// OIDCIssuer is one entry of auth.oidc: an identity provider whose JWT
// access tokens are accepted as bearer tokens.
type OIDCIssuer struct {
	// Issuer is the provider's issuer URL, exactly as its tokens' "iss".
	Issuer string
	// Audience must be one of a token's "aud" values.
	Audience string
	// JWKSURL is where the signing keys are; empty = the jwks_uri of the
	// issuer's discovery document.
	JWKSURL string
	// PrincipalClaim names the caller (default "sub").
	PrincipalClaim string
	// GroupsClaim lists the caller's groups (default "groups").
	GroupsClaim string
	// RequiredScopes must all be in the token's "scope" (or "scp").
	RequiredScopes []string
	// ClockSkew is how far exp and nbf may be off (default 60 s).
	ClockSkew time.Duration
	// Name qualifies the issuer's principals: "NAME:subject". Empty = the
	// bare subject, allowed for at most one issuer (see
	// checkIdentityNames).
	Name string
	// JWKSRefresh is how often the signing keys are fetched again even
	// when every token names a known key (default 10 min; a shorter
	// Cache-Control max-age on the key set wins).
	JWKSRefresh time.Duration
}

// Group is one entry of auth.groups: the tools its members may use.
type Group struct {
	// Tools are patterns as in a token's tools; empty allows none.
	Tools []string
	// Admin gives its members the admin right.
	Admin bool
	// Resources and Prompts are patterns as in a token's; empty allows none.
	Resources, Prompts []string
}

// Defaults of an auth.oidc entry.
const (
	DefaultPrincipalClaim = "sub"
	DefaultGroupsClaim    = "groups"
	DefaultClockSkew      = 60 * time.Second
	DefaultJWKSRefresh    = 10 * time.Minute
)

// parseAuthIdentity reads auth.oidc (one object or a list) and auth.groups
// into a. Groups come first, so tokens can be checked against them.
func parseAuthIdentity(a *Auth, oidcRaw, groupsRaw json.RawMessage) error {
	if groupsRaw != nil {
		groups, err := parseGroups(groupsRaw)
		if err != nil {
			return err
		}
		a.Groups = groups
	}
	if oidcRaw == nil {
		return nil
	}
	var list []json.RawMessage
	single := strings.HasPrefix(strings.TrimSpace(string(oidcRaw)), "{")
	if single {
		list = []json.RawMessage{oidcRaw}
	} else if err := strictDecode("auth.oidc", oidcRaw, &list); err != nil {
		return keyErr("auth.oidc", "must be an object {\"issuer\": …, \"audience\": …} or a list of them")
	}
	seen := map[string]bool{}
	for i, raw := range list {
		key := fmt.Sprintf("auth.oidc[%d]", i)
		if single {
			key = "auth.oidc"
		}
		iss, err := parseOIDCIssuer(key, raw)
		if err != nil {
			return err
		}
		if seen[iss.Issuer] {
			return keyErr(key+".issuer", "%q is listed twice; one entry per issuer", iss.Issuer)
		}
		seen[iss.Issuer] = true
		a.OIDC = append(a.OIDC, iss)
	}
	return nil
}

func parseOIDCIssuer(key string, raw json.RawMessage) (OIDCIssuer, error) {
	var r struct {
		Issuer         string   `json:"issuer"`
		Audience       string   `json:"audience"`
		JWKSURL        string   `json:"jwksUrl"`
		PrincipalClaim string   `json:"principalClaim"`
		GroupsClaim    string   `json:"groupsClaim"`
		RequiredScopes []string `json:"requiredScopes"`
		ClockSkew      *int64   `json:"clockSkew"`
		Name           string   `json:"name"`
		JWKSRefresh    *int64   `json:"jwksRefresh"`
	}
	if raw == nil || string(raw) == "null" {
		return OIDCIssuer{}, keyErr(key, "must be an object such as {\"issuer\": \"https://login.example.com\", \"audience\": \"toolnexus\"}")
	}
	if err := strictDecode(key, raw, &r); err != nil {
		return OIDCIssuer{}, err
	}
	if err := checkIdentityURL(key+".issuer", r.Issuer, true); err != nil {
		return OIDCIssuer{}, err
	}
	if r.Audience == "" {
		return OIDCIssuer{}, keyErr(key+".audience", "is required: the \"aud\" value the provider puts in tokens meant for toolnexus (for /mcp, its resource URL)")
	}
	if r.JWKSURL != "" {
		if err := checkIdentityURL(key+".jwksUrl", r.JWKSURL, false); err != nil {
			return OIDCIssuer{}, err
		}
	}
	iss := OIDCIssuer{Issuer: r.Issuer, Audience: r.Audience, JWKSURL: r.JWKSURL, PrincipalClaim: r.PrincipalClaim,
		GroupsClaim: r.GroupsClaim, RequiredScopes: r.RequiredScopes, ClockSkew: DefaultClockSkew, JWKSRefresh: DefaultJWKSRefresh}
	if err := checkIssuerName(key+".name", r.Name); err != nil {
		return OIDCIssuer{}, err
	}
	iss.Name = r.Name
	if r.JWKSRefresh != nil {
		if *r.JWKSRefresh < 1000 {
			return OIDCIssuer{}, keyErr(key+".jwksRefresh", "must be at least 1000 ms (how often the signing keys are fetched again; default 600000)")
		}
		iss.JWKSRefresh = time.Duration(*r.JWKSRefresh) * time.Millisecond
	}
	if iss.PrincipalClaim == "" {
		iss.PrincipalClaim = DefaultPrincipalClaim
	}
	if iss.GroupsClaim == "" {
		iss.GroupsClaim = DefaultGroupsClaim
	}
	for j, s := range r.RequiredScopes {
		if s == "" || strings.ContainsAny(s, " \t\"") {
			return OIDCIssuer{}, keyErr(fmt.Sprintf("%s.requiredScopes[%d]", key, j), "%q is not a scope (one word, no spaces or quotes)", s)
		}
	}
	if r.ClockSkew != nil {
		if *r.ClockSkew < 0 {
			return OIDCIssuer{}, keyErr(key+".clockSkew", "must be >= 0 milliseconds")
		}
		iss.ClockSkew = time.Duration(*r.ClockSkew) * time.Millisecond
	}
	return iss, nil
}

// checkIdentityURL accepts an absolute https URL, or http on a loopback
// host only: keys and tokens fetched in clear text from elsewhere could be
// swapped by anyone on the path.
func checkIdentityURL(key, raw string, issuer bool) error {
	if raw == "" {
		return keyErr(key, "is required: the provider's URL, e.g. \"https://login.example.com/realms/agents\"")
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return keyErr(key, "%q is not an absolute http(s) URL, e.g. \"https://login.example.com/realms/agents\"", raw)
	}
	if issuer && (u.RawQuery != "" || u.Fragment != "") {
		return keyErr(key, "%q has a query or fragment; an issuer URL has neither", raw)
	}
	if u.Scheme == "http" && !loopbackHost(u.Hostname()) {
		return keyErr(key, "%q uses http:// on a host that is not loopback; use https://", raw)
	}
	return nil
}

func loopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func parseGroups(raw json.RawMessage) (map[string]Group, error) {
	var r map[string]json.RawMessage
	if err := strictDecode("auth.groups", raw, &r); err != nil {
		return nil, keyErr("auth.groups", "must be an object {\"GROUP\": {\"tools\": [\"pattern\"], \"admin\": false}}")
	}
	out := make(map[string]Group, len(r))
	names := make([]string, 0, len(r))
	for name := range r {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		key := "auth.groups." + name
		var g struct {
			Tools     []string `json:"tools"`
			Admin     bool     `json:"admin"`
			Resources []string `json:"resources"`
			Prompts   []string `json:"prompts"`
		}
		if name == "" {
			return nil, keyErr("auth.groups", "a group name is empty")
		}
		if err := strictDecode(key, r[name], &g); err != nil {
			return nil, err
		}
		for j, p := range g.Tools {
			if _, err := path.Match(strings.TrimPrefix(p, "source:"), ""); err != nil {
				return nil, keyErr(fmt.Sprintf("%s.tools[%d]", key, j), "bad glob pattern %q: %v", p, err)
			}
		}
		if g.Tools == nil {
			g.Tools = []string{}
		}
		if err := checkFeatureGlobs(key, g.Resources, g.Prompts); err != nil {
			return nil, err
		}
		out[name] = Group{Tools: g.Tools, Admin: g.Admin, Resources: g.Resources, Prompts: g.Prompts}
	}
	return out, nil
}

// checkGroupRefs refuses a static token naming a group auth.groups lacks,
// so a typo never silently takes a token's tools away.
func checkGroupRefs(a Auth, key string, groups []string) error {
	for j, g := range groups {
		if _, ok := a.Groups[g]; !ok {
			known := make([]string, 0, len(a.Groups))
			for k := range a.Groups {
				known = append(known, k)
			}
			slices.Sort(known)
			return keyErr(fmt.Sprintf("%s[%d]", key, j), "group %q is not in auth.groups (known: %s)", g, strings.Join(known, ", "))
		}
	}
	return nil
}

// checkMCPResource accepts an empty server.mcp.resource (the listener's
// URL) or an absolute http(s) URL without a fragment (RFC 9728).
func checkMCPResource(r string) error {
	if r == "" {
		return nil
	}
	u, err := url.Parse(r)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || u.Fragment != "" {
		return keyErr("server.mcp.resource", "%q is not an absolute http(s) URL without a fragment, e.g. \"https://tools.example.com/mcp\"", r)
	}
	return nil
}
