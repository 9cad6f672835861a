package auth

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/toolnexus/toolnexus/internal/config"
)

// issuer verifies the JWTs of one auth.oidc entry.
type issuer struct {
	cfg    config.OIDCIssuer
	keys   *keySource
	groups map[string]config.Group
	// resource is server.mcp.resource, the audience /mcp advertises
	// (RFC 8707 clients ask for exactly it); accepted next to cfg.Audience.
	resource string
	// taken reports whether a bare principal name belongs to another
	// identity source (a static token, or reads as "NAME:…" of a named
	// issuer); only an unnamed issuer's subjects are checked.
	taken func(name string) bool
	// unmatched reports a verified token none of whose groups is an
	// auth.groups entry (groups_unmatched.go); nil = not reported.
	unmatched func(principal string, groups []string)
}

func newIssuer(c config.OIDCIssuer, a config.Auth, client *http.Client, log *slog.Logger, minInterval time.Duration) *issuer {
	every := c.JWKSRefresh
	if every <= 0 {
		every = config.DefaultJWKSRefresh
	}
	return &issuer{cfg: c, groups: a.Groups, resource: a.Resource,
		keys: &keySource{issuer: c.Issuer, jwksURL: c.JWKSURL, client: client, log: log, minInterval: minInterval, refreshEvery: every}}
}

// principalName is the name a verified subject goes by: "NAME:subject"
// for a named issuer, the bare subject otherwise. ok is false when a bare
// subject is another identity source's principal.
func (is *issuer) principalName(subject string) (string, bool) {
	if is.cfg.Name != "" {
		return is.cfg.Name + config.PrincipalSeparator + subject, true
	}
	return subject, is.taken == nil || !is.taken(subject)
}

// jwtHeader is the part of a JOSE header a check needs.
type jwtHeader struct {
	Alg string `json:"alg"`
	Kid string `json:"kid"`
}

// splitJWT decodes a compact JWS's header and (unverified) payload; ok is
// false when tok is not shaped like a JWT at all, so it is judged as a
// static token instead.
func splitJWT(tok string) (h jwtHeader, payload []byte, ok bool) {
	first := strings.IndexByte(tok, '.')
	last := strings.LastIndexByte(tok, '.')
	if first <= 0 || last == first || strings.Count(tok, ".") != 2 {
		return h, nil, false
	}
	hb, err := base64.RawURLEncoding.DecodeString(tok[:first])
	if err != nil || json.Unmarshal(hb, &h) != nil || h.Alg == "" {
		return h, nil, false
	}
	payload, err = base64.RawURLEncoding.DecodeString(tok[first+1 : last])
	if err != nil {
		return h, nil, false
	}
	return h, payload, true
}

// unverifiedIssuer reads "iss" to pick the issuer whose keys must have
// signed the token; nothing else is trusted before the signature checks.
func unverifiedIssuer(payload []byte) string {
	var c struct {
		Iss string `json:"iss"`
	}
	_ = json.Unmarshal(payload, &c)
	return c.Iss
}

// verify checks tok's signature and claims; on success it returns the
// caller and the time (Unix ns) its validation stops holding.
// verified is a token that passed: its caller, until when (Unix ns) that
// holds, and the thumbprint of the key that signed it (so the token can be
// forgotten when the provider drops the key).
type verified struct {
	p     *Principal
	until int64
	thumb string
}

func (is *issuer) verify(ctx context.Context, tok string, h jwtHeader, now time.Time) (verified, Reason) {
	if strings.EqualFold(h.Alg, "none") {
		return verified{}, ReasonAlgNone
	}
	candidates, ok := is.keys.find(ctx, h.Kid)
	if !ok {
		return verified{}, ReasonProviderUnreachable
	}
	if len(candidates) == 0 {
		return verified{}, ReasonUnknownKey
	}
	payload, key, r := verifySignature(tok, h.Alg, candidates)
	if r != ReasonNone {
		return verified{}, r
	}
	p, until, r := is.checkClaims(tok, payload, now)
	if r != ReasonNone {
		return verified{}, r
	}
	return verified{p: p, until: until, thumb: thumbprint(key)}, ReasonNone
}

func verifySignature(tok, alg string, candidates []jose.JSONWebKey) ([]byte, *jose.JSONWebKey, Reason) {
	// A bearer JWT is always the compact serialization; the JSON forms are refused.
	jws, err := jose.ParseSignedCompact(tok, []jose.SignatureAlgorithm{jose.SignatureAlgorithm(alg)})
	if err != nil || len(jws.Signatures) != 1 {
		return nil, nil, ReasonBadSignature
	}
	fitted := false
	for i := range candidates {
		if !algFits(alg, &candidates[i]) {
			continue
		}
		fitted = true
		if payload, err := jws.Verify(&candidates[i]); err == nil {
			return payload, &candidates[i], ReasonNone
		}
	}
	if !fitted {
		return nil, nil, ReasonAlgMismatch
	}
	return nil, nil, ReasonBadSignature
}

// claims are the registered claims a check reads; the rest (principal,
// groups) are looked up by their configured names in all.
type claims struct {
	Iss   string          `json:"iss"`
	Aud   json.RawMessage `json:"aud"`
	Exp   json.RawMessage `json:"exp"`
	Nbf   json.RawMessage `json:"nbf"`
	Scope string          `json:"scope"`
	Scp   json.RawMessage `json:"scp"`
}

func (is *issuer) checkClaims(tok string, payload []byte, now time.Time) (*Principal, int64, Reason) {
	var c claims
	var all map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	if dec.Decode(&all) != nil || json.Unmarshal(payload, &c) != nil {
		return nil, 0, ReasonBadClaims
	}
	if c.Iss != is.cfg.Issuer {
		return nil, 0, ReasonWrongIssuer
	}
	if aud := stringOrList(c.Aud); !contains(aud, is.cfg.Audience) && (is.resource == "" || !contains(aud, is.resource)) {
		return nil, 0, ReasonWrongAudience
	}
	skew := is.cfg.ClockSkew
	exp, ok := unixTime(c.Exp)
	if !ok {
		return nil, 0, ReasonBadClaims // a token that never expires is not accepted
	}
	if !now.Before(exp.Add(skew)) {
		return nil, 0, ReasonExpired
	}
	if nbf, ok := unixTime(c.Nbf); c.Nbf != nil && string(c.Nbf) != "null" && (!ok || now.Add(skew).Before(nbf)) {
		return nil, 0, ReasonNotYetValid
	}
	if len(is.cfg.RequiredScopes) > 0 {
		have := strings.Fields(c.Scope)
		if len(have) == 0 {
			have = stringOrList(c.Scp)
		}
		for _, s := range is.cfg.RequiredScopes {
			if !contains(have, s) {
				return nil, 0, ReasonMissingScope
			}
		}
	}
	var name string
	if json.Unmarshal(all[is.cfg.PrincipalClaim], &name) != nil || name == "" {
		return nil, 0, ReasonBadClaims
	}
	name, ok = is.principalName(name)
	if !ok {
		return nil, 0, ReasonPrincipalTaken
	}
	var groups []string
	if raw, ok := all[is.cfg.GroupsClaim]; ok {
		groups = stringOrList(raw)
	}
	p := principalOfGroups(name, groups, is.groups)
	if is.unmatched != nil && len(is.groups) > 0 && !anyGroupDefined(groups, is.groups) {
		is.unmatched(name, groups)
	}
	p.token = tok
	p.Issuer = is.cfg.Issuer
	return p, exp.Add(skew).UnixNano(), ReasonNone
}

// stringOrList reads a claim that is one string or a list of strings (aud,
// scp, groups); anything else is empty.
func stringOrList(raw json.RawMessage) []string {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		if one == "" {
			return nil
		}
		return []string{one}
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return list
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// unixTime reads a NumericDate (RFC 7519 section 2): a JSON number of
// seconds. A string, even one holding digits, is not one.
func unixTime(raw json.RawMessage) (time.Time, bool) {
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return time.Time{}, false
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(int64(f), 0), true
}
