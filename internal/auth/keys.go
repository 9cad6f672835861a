package auth

import (
	"context"
	"crypto"
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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-jose/go-jose/v4"
)

// fetchTimeout bounds one discovery or JWKS request, so an identity
// provider that hangs delays the calls waiting for keys by at most this.
const fetchTimeout = 5 * time.Second

// maxKidWait bounds how long a token naming an unknown key id waits for
// the next fetch the rate limit allows: a key the provider has just
// rotated in arrives within it, even right after another unknown key id
// (perhaps a forged one) used the fetch slot.
const maxKidWait = 2 * time.Second

// keySource is one issuer's signing keys: fetched at start, fetched again
// on a schedule (every refreshEvery, or the key set's shorter Cache-Control
// max-age) so that a key the provider removes stops being trusted, and
// fetched again when a token names a key not in the set (how a provider's
// key rotation arrives without waiting for the schedule). Fetches are rate
// limited, so tokens with made-up key ids cannot make toolnexus hammer the
// provider; they are single-flight, and a token with an unknown key id
// waits for the fetch in flight (or the next one allowed) rather than
// failing while it runs.
type keySource struct {
	issuer  string
	jwksURL string // from config; empty = discover
	client  *http.Client
	log     *slog.Logger
	// minInterval is the least time between two fetch attempts.
	minInterval time.Duration
	// refreshEvery is the schedule (auth.oidc.jwksRefresh).
	refreshEvery time.Duration
	// removed is told the thumbprints of keys a fetch no longer lists, so
	// the tokens they signed leave the verified-token cache.
	removed func(k *keySource, thumbs map[string]bool)

	keys atomic.Pointer[[]jose.JSONWebKey] // nil until the first fetch succeeds
	// due is when the next scheduled fetch is due, in Unix ns; checked
	// (one atomic load) on every JWT call. refreshing is set while the
	// call that found it due makes that fetch.
	due        atomic.Int64
	refreshing atomic.Bool

	mu         sync.Mutex // guards the fields below; never held across a fetch
	lastTry    time.Time
	flight     *fetchFlight // the fetch running or waiting for its slot; nil if none
	discovered string       // jwks_uri from discovery, once known
	down       bool         // the last attempt failed (logged once per outage)
}

// fetchFlight is one fetch that callers wait on together.
type fetchFlight struct {
	done chan struct{}
	// fetched is false when its leader left before fetching (set before
	// done closes); a waiter still wanting keys then leads the next.
	fetched bool
}

// find returns the keys that may have signed a token with key id kid (all
// keys when the token names none), fetching the set again when kid is
// unknown. ok is false when no key set was ever fetched.
func (k *keySource) find(ctx context.Context, kid string) (keys []jose.JSONWebKey, ok bool) {
	if set := k.keys.Load(); set != nil {
		if m := match(*set, kid); len(m) > 0 {
			return m, true
		}
	}
	k.await(ctx, maxKidWait)
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

// await makes sure a fetch starts no earlier than now and waits for it (or
// for ctx): it joins the fetch in flight, or leads a new one once the rate
// limit allows — unless that is more than wait away, then it returns at
// once (the keys stay as they are). It reports whether a fetch was made
// (successful or not) while it waited.
func (k *keySource) await(ctx context.Context, wait time.Duration) bool {
	for {
		k.mu.Lock()
		if f := k.flight; f != nil {
			k.mu.Unlock()
			select {
			case <-f.done:
				if f.fetched || ctx.Err() != nil {
					return f.fetched
				}
				continue // its leader left before fetching
			case <-ctx.Done():
				return false
			}
		}
		delay := time.Duration(0)
		if !k.lastTry.IsZero() {
			delay = k.minInterval - time.Since(k.lastTry)
		}
		if delay > wait {
			k.mu.Unlock()
			return false
		}
		f := &fetchFlight{done: make(chan struct{})}
		k.flight = f
		k.mu.Unlock()
		k.lead(ctx, f, delay)
		return f.fetched
	}
}

// lead runs flight f: it waits out delay, fetches, and wakes the callers
// waiting on f.
func (k *keySource) lead(ctx context.Context, f *fetchFlight, delay time.Duration) {
	defer func() {
		k.mu.Lock()
		k.flight = nil
		k.mu.Unlock()
		close(f.done)
	}()
	if delay > 0 {
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
	}
	k.mu.Lock()
	k.lastTry = time.Now()
	k.mu.Unlock()
	fctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	keys, maxAge, err := k.fetch(fctx)
	if err != nil && ctx.Err() != nil {
		return // the caller left; not the provider's fault
	}
	f.fetched = true
	if err != nil {
		k.failed(err)
		return
	}
	k.store(keys, maxAge)
}

// refreshIfDue makes the scheduled fetch when it is due, before the call
// that notices goes on: that call (and any that arrives while the fetch
// runs) is looked up in the cache and verified against the key set as
// the provider publishes it now — a key removed while nobody called is
// not trusted by the first call after the pause. Between fetches it is
// one atomic load. The fetch is bounded by ctx and fetchTimeout; one the
// caller left before it ran is made by the next call instead.
func (k *keySource) refreshIfDue(ctx context.Context, now int64) {
	if k.refreshing.Load() {
		k.await(ctx, 0) // join the scheduled fetch in flight
		return
	}
	due := k.due.Load()
	if now < due {
		return
	}
	if !k.refreshing.CompareAndSwap(false, true) {
		k.await(ctx, 0) // another call took this turn: wait for its fetch
		return
	}
	defer k.refreshing.Store(false)
	if k.due.Load() != due {
		return // made meanwhile
	}
	k.due.Store(now + int64(k.refreshEvery)) // a failed fetch is retried after the interval
	if !k.await(ctx, k.minInterval) {
		k.due.Store(due) // not made (the caller left): the next call makes it
	}
}

// refresh is the fetch at start: made at once, waited for.
func (k *keySource) refresh(ctx context.Context) { k.await(ctx, time.Hour) }

func (k *keySource) failed(err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.down {
		k.log.Warn("auth.oidc: identity provider unreachable; its tokens are refused until it answers (static tokens keep working)",
			"issuer", k.issuer, "error", err.Error())
	}
	k.down = true
}

// store installs a fetched key set, schedules the next fetch, and drops
// the tokens signed by keys it no longer lists.
func (k *keySource) store(keys []jose.JSONWebKey, maxAge time.Duration) {
	k.mu.Lock()
	if k.down {
		k.log.Info("auth.oidc: identity provider reachable again", "issuer", k.issuer, "keys", len(keys))
	}
	k.down = false
	k.mu.Unlock()
	every := k.refreshEvery
	if maxAge > 0 && maxAge < every {
		every = max(maxAge, k.minInterval)
	}
	k.due.Store(time.Now().Add(every).UnixNano())
	old := k.keys.Swap(&keys)
	if old == nil || k.removed == nil {
		return
	}
	kept := make(map[string]bool, len(keys))
	for i := range keys {
		kept[thumbprint(&keys[i])] = true
	}
	gone := map[string]bool{}
	for i := range *old {
		if t := thumbprint(&(*old)[i]); !kept[t] {
			gone[t] = true
		}
	}
	if len(gone) > 0 {
		k.removed(k, gone)
	}
}

// lists reports whether the current key set has the key of thumbprint t.
func (k *keySource) lists(t string) bool {
	set := k.keys.Load()
	if set == nil {
		return false
	}
	for i := range *set {
		if thumbprint(&(*set)[i]) == t {
			return true
		}
	}
	return false
}

// thumbprint identifies a key by its RFC 7638 thumbprint: key ids may be
// reused for another key.
func thumbprint(key *jose.JSONWebKey) string {
	t, err := key.Thumbprint(crypto.SHA256)
	if err != nil {
		return ""
	}
	return string(t)
}

// fetch gets the key set, and the max-age its response allows caching it
// for (0 = none given).
func (k *keySource) fetch(ctx context.Context) ([]jose.JSONWebKey, time.Duration, error) {
	url := k.jwksURL
	if url == "" {
		url = k.discovered
	}
	if url == "" {
		// Discovery also checks that the document's issuer is the one
		// configured (OpenID Connect Discovery 1.0, section 4.3).
		p, err := oidc.NewProvider(oidc.ClientContext(ctx, k.client), k.issuer)
		if err != nil {
			return nil, 0, fmt.Errorf("discovery: %w", err)
		}
		var doc struct {
			JWKSURI string `json:"jwks_uri"`
		}
		if err := p.Claims(&doc); err != nil || doc.JWKSURI == "" {
			return nil, 0, errors.New("discovery document has no jwks_uri")
		}
		k.discovered, url = doc.JWKSURI, doc.JWKSURI
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := k.client.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, 0, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, 0, err
	}
	keys, err := parseKeySet(body)
	return keys, maxAge(resp.Header.Get("Cache-Control")), err
}

// maxAge reads a Cache-Control max-age (RFC 9111 section 5.2.2.1); 0 when
// there is none, or no-store/no-cache asks not to keep the set at all
// (the schedule's own interval then applies: the keys are needed).
func maxAge(cc string) time.Duration {
	for _, d := range strings.Split(cc, ",") {
		d = strings.TrimSpace(strings.ToLower(d))
		if v, ok := strings.CutPrefix(d, "max-age="); ok {
			n, err := strconv.ParseInt(strings.Trim(v, `"`), 10, 64)
			if err != nil || n < 0 {
				return 0
			}
			return time.Duration(min(n, 1<<31)) * time.Second
		}
	}
	return 0
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
