package tokenexchange

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/toolnexus/toolnexus/internal/callerctx"
	"github.com/toolnexus/toolnexus/pkg/sources"
)

// maxCached bounds the exchanged-token cache per upstream; past it,
// expired entries are dropped, then everything.
const maxCached = 4096

// earlyRefresh exchanges again this long before a cached token expires, so
// a token is never sent in its last seconds.
const earlyRefresh = 30 * time.Second

// Exchanger exchanges callers' tokens for one upstream.
type Exchanger struct {
	upstream string // names the upstream in errors
	cfg      Config
	secret   string // ClientSecret expanded
	client   *http.Client

	mu      sync.Mutex // guards cache and service; taken only by calls of this upstream
	cache   map[[32]byte]exchanged
	service exchanged // the client's own token (ServiceToken)
}

type exchanged struct {
	token string
	until time.Time
}

// New makes the exchanger for upstream (a tool or spec name, used in
// errors). client makes the requests to the token endpoint.
func New(upstream string, cfg Config, client *http.Client) (*Exchanger, error) {
	secret, err := sources.ExpandEnv(cfg.ClientSecret)
	if err != nil {
		return nil, fmt.Errorf("%s: tokenExchange.clientSecret: %v", upstream, err)
	}
	return &Exchanger{upstream: upstream, cfg: cfg, secret: secret, client: client, cache: map[[32]byte]exchanged{}}, nil
}

// Error is a failed exchange: it names the upstream and why, never a token.
type Error struct {
	Upstream string
	Reason   string
}

func (e *Error) Error() string {
	return "token exchange for " + e.Upstream + " failed: " + e.Reason
}

// Token returns a token for the upstream standing for the caller in ctx.
func (x *Exchanger) Token(ctx context.Context) (string, error) {
	subject := callerctx.BearerToken(ctx)
	if subject == "" {
		return "", &Error{x.upstream, "the caller did not authenticate with an identity-provider token (auth.oidc), so there is no identity to exchange"}
	}
	key := sha256.Sum256([]byte(subject))
	now := time.Now()
	x.mu.Lock()
	if e, ok := x.cache[key]; ok && now.Before(e.until) {
		x.mu.Unlock()
		return e.token, nil
	}
	x.mu.Unlock()
	tok, ttl, err := x.exchange(ctx, subject)
	if err != nil {
		return "", err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if len(x.cache) >= maxCached {
		for k, e := range x.cache {
			if !now.Before(e.until) {
				delete(x.cache, k)
			}
		}
		if len(x.cache) >= maxCached {
			clear(x.cache)
		}
	}
	if ttl > earlyRefresh {
		x.cache[key] = exchanged{token: tok, until: now.Add(ttl - earlyRefresh)}
	}
	return tok, nil
}

func (x *Exchanger) exchange(ctx context.Context, subject string) (string, time.Duration, error) {
	form := url.Values{
		"grant_type":           {"urn:ietf:params:oauth:grant-type:token-exchange"},
		"subject_token":        {subject},
		"subject_token_type":   {"urn:ietf:params:oauth:token-type:access_token"},
		"requested_token_type": {"urn:ietf:params:oauth:token-type:access_token"},
	}
	if x.cfg.Audience != "" {
		form.Set("audience", x.cfg.Audience)
	}
	return x.request(ctx, form)
}

// ServiceToken is the configured client's own token for the upstream
// (client credentials, for audience and scope): what a source sends on the
// requests no caller makes, such as listing an MCP server's tools. It is
// cached until shortly before it expires.
func (x *Exchanger) ServiceToken(ctx context.Context) (string, error) {
	now := time.Now()
	x.mu.Lock()
	if e := x.service; e.token != "" && now.Before(e.until) {
		x.mu.Unlock()
		return e.token, nil
	}
	x.mu.Unlock()
	form := url.Values{"grant_type": {"client_credentials"}}
	if x.cfg.Audience != "" {
		form.Set("audience", x.cfg.Audience)
		if u, err := url.Parse(x.cfg.Audience); err == nil && u.IsAbs() {
			form.Set("resource", x.cfg.Audience) // RFC 8707 names the upstream this way
		}
	}
	tok, ttl, err := x.request(ctx, form)
	if err != nil {
		return "", err
	}
	if ttl > earlyRefresh {
		x.mu.Lock()
		x.service = exchanged{token: tok, until: now.Add(ttl - earlyRefresh)}
		x.mu.Unlock()
	}
	return tok, nil
}

// request posts form (plus the scope) to the token endpoint with the
// client's credentials and returns the access token and its lifetime.
func (x *Exchanger) request(ctx context.Context, form url.Values) (string, time.Duration, error) {
	if x.cfg.Scope != "" {
		form.Set("scope", x.cfg.Scope)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, x.cfg.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", 0, &Error{x.upstream, "bad tokenUrl"}
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(url.QueryEscape(x.cfg.ClientID), url.QueryEscape(x.secret))
	resp, err := x.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is in the config; the form (with the token) never is in the error
		}
		return "", 0, &Error{x.upstream, "token endpoint unreachable: " + err.Error()}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var r struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
		Error       string `json:"error"`
	}
	_ = json.Unmarshal(body, &r)
	if resp.StatusCode != http.StatusOK || r.AccessToken == "" {
		why := resp.Status
		if r.Error != "" && !strings.ContainsAny(r.Error, " \"") {
			why += " (" + r.Error + ")" // an RFC 6749 error code; the description could echo input, so it is left out
		}
		return "", 0, &Error{x.upstream, "the identity provider refused: " + why}
	}
	return r.AccessToken, time.Duration(r.ExpiresIn) * time.Second, nil
}

// Transport sets "Authorization: Bearer <exchanged token>" on every request
// it sends; a failed exchange fails the request with an *Error.
type Transport struct {
	Base http.RoundTripper
	X    *Exchanger
}

// RoundTrip implements http.RoundTripper.
func (t Transport) RoundTrip(r *http.Request) (*http.Response, error) {
	tok, err := t.X.Token(r.Context())
	if err != nil {
		if r.Body != nil {
			_ = r.Body.Close()
		}
		return nil, err
	}
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+tok)
	return t.Base.RoundTrip(r)
}

// Client is base with its transport wrapped by an exchanger for upstream;
// base itself is left as it is.
func Client(base *http.Client, x *Exchanger) *http.Client {
	c := *base
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	c.Transport = Transport{Base: rt, X: x}
	return &c
}
