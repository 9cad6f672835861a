package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-jose/go-jose/v4"
)

// fetchTimeout bounds one discovery or JWKS request, so an identity
// provider that hangs delays the calls waiting for keys by at most this.
const fetchTimeout = 5 * time.Second

// keySource is one issuer's signing keys: fetched at start, kept, and
// fetched again when a token names a key not in the set (how a provider's
// key rotation arrives without a restart). Refetches are rate limited, so
// tokens with made-up key ids cannot make toolnexus hammer the provider.
type keySource struct {
	issuer  string
	jwksURL string // from config; empty = discover
	client  *http.Client
	log     *slog.Logger
	// minInterval is the least time between two fetch attempts.
	minInterval time.Duration

	keys atomic.Pointer[[]jose.JSONWebKey] // nil until the first fetch succeeds

	mu         sync.Mutex // serialises fetches; never taken for a known key
	lastTry    time.Time
	discovered string // jwks_uri from discovery, once known
	down       bool   // the last attempt failed (logged once per outage)
}

// find returns the keys that may have signed a token with key id kid (all
// keys when the token names none), fetching the set again when kid is
// unknown. ok is false when no key set was ever fetched.
func (k *keySource) find(kid string) (keys []jose.JSONWebKey, ok bool) {
	if set := k.keys.Load(); set != nil {
		if m := match(*set, kid); len(m) > 0 {
			return m, true
		}
	}
	k.refresh()
	set := k.keys.Load()
	if set == nil {
		return nil, false
	}
	return match(*set, kid), true
}

func match(set []jose.JSONWebKey, kid string) []jose.JSONWebKey {
	if kid == "" {
		return set
	}
	for i := range set {
		if set[i].KeyID == kid {
			return set[i : i+1]
		}
	}
	return nil
}

// refresh fetches the key set unless an attempt was made within
// minInterval. Callers that arrive during a fetch wait for it and then
// use what it found.
func (k *keySource) refresh() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.lastTry.IsZero() && time.Since(k.lastTry) < k.minInterval {
		return
	}
	k.lastTry = time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), fetchTimeout)
	defer cancel()
	keys, err := k.fetch(ctx)
	if err != nil {
		if !k.down {
			k.log.Warn("auth.oidc: identity provider unreachable; its tokens are refused until it answers (static tokens keep working)",
				"issuer", k.issuer, "error", err.Error())
		}
		k.down = true
		return
	}
	if k.down {
		k.log.Info("auth.oidc: identity provider reachable again", "issuer", k.issuer, "keys", len(keys))
	}
	k.down = false
	k.keys.Store(&keys)
}

func (k *keySource) fetch(ctx context.Context) ([]jose.JSONWebKey, error) {
	url := k.jwksURL
	if url == "" {
		url = k.discovered
	}
	if url == "" {
		// Discovery also checks that the document's issuer is the one
		// configured (OpenID Connect Discovery 1.0, section 4.3).
		p, err := oidc.NewProvider(oidc.ClientContext(ctx, k.client), k.issuer)
		if err != nil {
			return nil, fmt.Errorf("discovery: %w", err)
		}
		var doc struct {
			JWKSURI string `json:"jwks_uri"`
		}
		if err := p.Claims(&doc); err != nil || doc.JWKSURI == "" {
			return nil, errors.New("discovery document has no jwks_uri")
		}
		k.discovered, url = doc.JWKSURI, doc.JWKSURI
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := k.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	return parseKeySet(body)
}

// parseKeySet keeps the public signing keys of a JWKS and skips the ones it
// cannot use (other key types, encryption keys), as RFC 7517 section 5 asks.
func parseKeySet(body []byte) ([]jose.JSONWebKey, error) {
	var raw struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, fmt.Errorf("JWKS: %w", err)
	}
	keys := make([]jose.JSONWebKey, 0, len(raw.Keys))
	for _, r := range raw.Keys {
		var k jose.JSONWebKey
		if json.Unmarshal(r, &k) != nil || !k.Valid() || !k.IsPublic() || (k.Use != "" && k.Use != "sig") {
			continue
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// algFits reports whether a token's alg may be verified with key: the
// alg must be an asymmetric one of the key's own type (and curve), and the
// key's declared alg if it has one. That refuses an HMAC token presented
// against a public key, the classic confusion attack.
func algFits(alg string, key *jose.JSONWebKey) bool {
	if key.Algorithm != "" && key.Algorithm != alg {
		return false
	}
	switch pk := key.Key.(type) {
	case *rsa.PublicKey:
		switch alg {
		case "RS256", "RS384", "RS512", "PS256", "PS384", "PS512":
			return true
		}
	case *ecdsa.PublicKey:
		switch {
		case alg == "ES256" && pk.Curve == elliptic.P256(),
			alg == "ES384" && pk.Curve == elliptic.P384(),
			alg == "ES512" && pk.Curve == elliptic.P521():
			return true
		}
	case ed25519.PublicKey:
		return alg == "EdDSA"
	}
	return false
}
