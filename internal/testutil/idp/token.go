package idp

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// TokenExchangeGrant is RFC 8693's grant type.
const TokenExchangeGrant = "urn:ietf:params:oauth:grant-type:token-exchange"

// token is the token endpoint: client_credentials (the "resource"
// parameter, RFC 8707, becomes the audience) and RFC 8693 token exchange
// (the subject token must be one of this provider's; the new token keeps
// its subject and names the exchanging client as actor).
func (p *Provider) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthError(w, "invalid_request", err.Error())
		return
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	p.mu.Lock()
	c, known := p.clients[id]
	p.mu.Unlock()
	if !known || c.Secret != secret {
		w.Header().Set("WWW-Authenticate", `Basic realm="idp"`)
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	}
	scope := r.PostForm.Get("scope")
	switch r.PostForm.Get("grant_type") {
	case "client_credentials":
		aud := r.PostForm.Get("resource")
		if aud == "" {
			aud = r.PostForm.Get("audience")
		}
		claims := Claims{"sub": c.Subject, "aud": aud, "groups": c.Groups, "client_id": c.ID}
		if scope != "" {
			claims["scope"] = scope
		}
		p.issue(w, claims, scope)
	case TokenExchangeGrant:
		p.exchangeToken(w, r, c, scope)
	default:
		oauthError(w, "unsupported_grant_type", r.PostForm.Get("grant_type"))
	}
}

func (p *Provider) exchangeToken(w http.ResponseWriter, r *http.Request, c Client, scope string) {
	subject := r.PostForm.Get("subject_token")
	sub, groups, ok := p.verifyOwn(subject)
	if !ok || r.PostForm.Get("subject_token_type") != "urn:ietf:params:oauth:token-type:access_token" {
		oauthError(w, "invalid_grant", "subject_token is not a valid access token of this provider")
		return
	}
	aud := r.PostForm.Get("audience")
	if aud == "" {
		aud = r.PostForm.Get("resource")
	}
	p.mu.Lock()
	p.exchange = append(p.exchange, ExchangeRequest{ClientID: c.ID, Audience: aud, Scope: scope, SubjectSubject: sub})
	p.mu.Unlock()
	claims := Claims{"sub": sub, "aud": aud, "groups": groups, "act": map[string]string{"sub": c.ID}}
	if scope != "" {
		claims["scope"] = scope
	}
	p.issue(w, claims, scope)
}

func (p *Provider) issue(w http.ResponseWriter, claims Claims, scope string) {
	resp := map[string]any{"access_token": p.Mint(claims), "token_type": "Bearer", "expires_in": int(time.Hour.Seconds()),
		"issued_token_type": "urn:ietf:params:oauth:token-type:access_token"}
	if scope != "" {
		resp["scope"] = scope
	}
	writeJSON(w, http.StatusOK, resp)
}

// verifyOwn checks a token this provider signed and returns its subject
// and groups.
func (p *Provider) verifyOwn(tok string) (sub string, groups []string, ok bool) {
	jws, err := jose.ParseSigned(tok, []jose.SignatureAlgorithm{jose.RS256, jose.ES256})
	if err != nil || len(jws.Signatures) != 1 {
		return "", nil, false
	}
	kid := jws.Signatures[0].Header.KeyID
	p.mu.Lock()
	var key any
	for _, k := range p.keys {
		if k.kid == kid {
			key = k.priv.Public()
		}
	}
	p.mu.Unlock()
	if key == nil {
		return "", nil, false
	}
	body, err := jws.Verify(key)
	if err != nil {
		return "", nil, false
	}
	var c struct {
		Sub    string   `json:"sub"`
		Groups []string `json:"groups"`
		Exp    int64    `json:"exp"`
	}
	if json.Unmarshal(body, &c) != nil || c.Sub == "" || time.Now().Unix() >= c.Exp {
		return "", nil, false
	}
	return c.Sub, c.Groups, true
}

func oauthError(w http.ResponseWriter, code, desc string) {
	writeJSON(w, http.StatusBadRequest, map[string]string{"error": code, "error_description": strings.TrimSpace(desc)})
}
