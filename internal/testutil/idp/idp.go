// Package idp mints the tokens a real identity provider never would, for
// the tests of what toolnexus refuses: unsigned ("alg": "none"), HMAC
// signed with the provider's public key (algorithm confusion), signed by a
// key the JWKS never lists, a payload swapped under a valid signature, and
// tokens with exactly the claims a test needs (a chosen exp or nbf, a
// foreign iss, a missing claim). It serves discovery and a JWKS on
// 127.0.0.1 so the verifier fetches its keys over real HTTP.
//
// Tests that need real tokens — issued by a token endpoint, exchanged,
// signed by a rotated key, from a provider that goes down and comes back —
// use internal/testutil/oidcop, a real OpenID provider.
package idp

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/toolnexus/toolnexus/internal/testutil"
)

// Provider is the test's identity provider.
type Provider struct {
	// Issuer is the provider's URL and the "iss" of its tokens.
	Issuer string

	t testing.TB

	mu      sync.Mutex
	keys    []signingKey // keys[len-1] signs; all but the retired are published
	retired map[string]bool
	maxAge  int           // Cache-Control max-age of the JWKS; < 0 = no-store
	hold    chan struct{} // non-nil: JWKS requests wait for it to close
	held    int           // JWKS requests waiting on hold now
	fetches int           // JWKS requests answered

	http testutil.BackgroundHTTP
}

type signingKey struct {
	kid  string
	priv crypto.Signer
	alg  jose.SignatureAlgorithm
}

// Start starts a provider on a fresh loopback port; it stops with the test.
func Start(t testing.TB) *Provider {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Provider{Issuer: "http://" + l.Addr().String(), t: t, retired: map[string]bool{}, maxAge: -1}
	p.keys = []signingKey{newRSAKey(t, "rsa-1")}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", p.discovery)
	mux.HandleFunc("GET /keys", p.jwks)
	p.http.Serve(l, mux)
	t.Cleanup(p.Stop)
	return p
}

// Stop stops answering (idempotent).
func (p *Provider) Stop() { p.http.Stop() }

func newRSAKey(t testing.TB, kid string) signingKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return signingKey{kid: kid, priv: k, alg: jose.RS256}
}

func newECKey(t testing.TB, kid string) signingKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return signingKey{kid: kid, priv: k, alg: jose.ES256}
}

func (p *Provider) discovery(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                p.Issuer,
		"jwks_uri":                              p.Issuer + "/keys",
		"authorization_endpoint":                p.Issuer + "/authorize",
		"response_types_supported":              []string{"code"},
		"subject_types_supported":               []string{"public"},
		"id_token_signing_alg_values_supported": []string{"RS256", "ES256"},
	})
}

// KeyFetches is how many times the JWKS was fetched.
func (p *Provider) KeyFetches() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fetches
}

func (p *Provider) jwks(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	hold := p.hold
	if hold != nil {
		p.held++
	}
	p.mu.Unlock()
	if hold != nil {
		defer func() {
			p.mu.Lock()
			p.held--
			p.mu.Unlock()
		}()
		select {
		case <-hold:
		case <-r.Context().Done():
			return
		}
	}
	p.mu.Lock()
	p.fetches++
	set := jose.JSONWebKeySet{}
	for _, k := range p.keys {
		if !p.retired[k.kid] {
			set.Keys = append(set.Keys, jose.JSONWebKey{Key: k.priv.Public(), KeyID: k.kid, Algorithm: string(k.alg), Use: "sig"})
		}
	}
	maxAge := p.maxAge
	p.mu.Unlock()
	if maxAge >= 0 {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", fmt.Sprintf("public, max-age=%d", maxAge))
		_ = json.NewEncoder(w).Encode(set)
		return
	}
	writeJSON(w, http.StatusOK, set)
}

// Rotate makes a new RSA key the signing key and publishes it; the old
// keys stay published until Retire.
func (p *Provider) Rotate() (kid string) {
	p.mu.Lock()
	kid = fmt.Sprintf("rsa-%d", len(p.keys)+1)
	p.mu.Unlock()
	k := newRSAKey(p.t, kid)
	p.mu.Lock()
	p.keys = append(p.keys, k)
	p.mu.Unlock()
	return kid
}

// Retire stops publishing key kid, as a provider drops a compromised key;
// MintWith can still sign with it, as its thief would.
func (p *Provider) Retire(kid string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.retired[kid] = true
}

// MintWith signs claims with key kid, published or not.
func (p *Provider) MintWith(kid string, c Claims) string {
	p.mu.Lock()
	var key *signingKey
	for i := range p.keys {
		if p.keys[i].kid == kid {
			key = &p.keys[i]
		}
	}
	p.mu.Unlock()
	if key == nil {
		p.t.Fatalf("idp: no key %q", kid)
	}
	return p.sign(*key, c)
}

// Held is how many JWKS requests are waiting for HoldKeys' release.
func (p *Provider) Held() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.held
}

// SetMaxAge makes the JWKS say Cache-Control: max-age=seconds (the
// default, < 0, is no-store).
func (p *Provider) SetMaxAge(seconds int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.maxAge = seconds
}

// HoldKeys makes JWKS requests wait until release is called (or they are
// cancelled): a test can have a key fetch in flight.
func (p *Provider) HoldKeys() (release func()) {
	ch := make(chan struct{})
	p.mu.Lock()
	p.hold = ch
	p.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			p.hold = nil
			p.mu.Unlock()
			close(ch)
		})
	}
}

// Claims are a token's claims; Mint fills iss, iat and (when absent) exp.
type Claims map[string]any

// With is a copy of c with k set to v: one claim changed from a good set,
// as a crafted token changes it.
func (c Claims) With(k string, v any) Claims {
	out := make(Claims, len(c)+1)
	for kk, vv := range c {
		out[kk] = vv
	}
	out[k] = v
	return out
}

// Mint signs claims with the current key.
func (p *Provider) Mint(c Claims) string {
	p.mu.Lock()
	k := p.keys[len(p.keys)-1]
	p.mu.Unlock()
	return p.sign(k, c)
}

func (p *Provider) fill(c Claims) Claims {
	out := Claims{"iss": p.Issuer, "iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix()}
	for k, v := range c {
		if v == nil {
			delete(out, k) // Claims{"exp": nil} mints a token without exp
			continue
		}
		out[k] = v
	}
	return out
}

func (p *Provider) sign(k signingKey, c Claims) string {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: k.alg, Key: jose.JSONWebKey{Key: k.priv, KeyID: k.kid}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		p.t.Fatal(err)
	}
	return p.signWith(signer, c)
}

func (p *Provider) signWith(signer jose.Signer, c Claims) string {
	body, err := json.Marshal(p.fill(c))
	if err != nil {
		p.t.Fatal(err)
	}
	jws, err := signer.Sign(body)
	if err != nil {
		p.t.Fatal(err)
	}
	tok, err := jws.CompactSerialize()
	if err != nil {
		p.t.Fatal(err)
	}
	return tok
}

// MintUnpublished signs claims with a fresh EC key the JWKS never lists.
func (p *Provider) MintUnpublished(c Claims) string {
	return p.sign(newECKey(p.t, "never-published"), c)
}

// MintTampered signs claims, then swaps the payload for other, keeping the
// signature: a forged token with a valid key id.
func (p *Provider) MintTampered(c, other Claims) string {
	tok := p.Mint(c)
	parts := strings.Split(tok, ".")
	body, _ := json.Marshal(p.fill(other))
	return parts[0] + "." + base64.RawURLEncoding.EncodeToString(body) + "." + parts[2]
}

// MintAlgNone makes an unsigned token naming the current key.
func (p *Provider) MintAlgNone(c Claims) string {
	p.mu.Lock()
	kid := p.keys[len(p.keys)-1].kid
	p.mu.Unlock()
	h, _ := json.Marshal(map[string]string{"alg": "none", "typ": "JWT", "kid": kid})
	body, _ := json.Marshal(p.fill(c))
	return base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(body) + "."
}

// MintHMACWithPublicKey signs claims with HS256 using the current RSA
// key's public key (DER) as the secret and that key's id: the algorithm
// confusion attack on verifiers that trust the token's alg.
func (p *Provider) MintHMACWithPublicKey(c Claims) string {
	p.mu.Lock()
	k := p.keys[0]
	p.mu.Unlock()
	der, err := x509.MarshalPKIXPublicKey(k.priv.Public())
	if err != nil {
		p.t.Fatal(err)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: der},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", k.kid))
	if err != nil {
		p.t.Fatal(err)
	}
	return p.signWith(signer, c)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
