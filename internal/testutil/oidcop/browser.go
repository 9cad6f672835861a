package oidcop

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
)

// What this file adds around zitadel's provider for the browser flow: a
// login page (pick the user by name), dynamic client registration
// (RFC 7591, which zitadel's op package leaves to the product), the
// RFC 9207 iss parameter on authorization responses (advertised in the
// discovery document), the RFC 8707 resource of an authorization request
// as the tokens' audience, and the knobs a test attacks with: a token
// endpoint that is slow or answers garbage, a wrong iss.

const (
	loginPath    = "/login"
	registerPath = "/register"
)

// browserKnobs are a provider's test settings for the browser flow.
type browserKnobs struct {
	mu          sync.Mutex
	iss         string           // sent as iss on authorization responses; "" = the issuer
	tokenDelay  time.Duration    // added to every token request
	tokenAnswer http.HandlerFunc // answers token requests instead of the provider
	tokenTimes  []time.Duration  // how long each token request took here
}

// SetIssParam makes authorization responses carry iss=v (a mix-up attack
// when v is not the issuer); "" restores the issuer.
func (p *Provider) SetIssParam(v string) {
	p.knobs.mu.Lock()
	defer p.knobs.mu.Unlock()
	p.knobs.iss = v
}

// SetTokenDelay delays every token endpoint answer by d (a slow provider).
func (p *Provider) SetTokenDelay(d time.Duration) {
	p.knobs.mu.Lock()
	defer p.knobs.mu.Unlock()
	p.knobs.tokenDelay = d
}

// SetTokenAnswer makes h answer the token endpoint instead of the
// provider (garbage, megabytes); nil restores it.
func (p *Provider) SetTokenAnswer(h http.HandlerFunc) {
	p.knobs.mu.Lock()
	defer p.knobs.mu.Unlock()
	p.knobs.tokenAnswer = h
}

// TokenTimes returns how long each token request took inside the
// provider (its own latency, delay included) since the last call, and
// forgets them.
func (p *Provider) TokenTimes() []time.Duration {
	p.knobs.mu.Lock()
	defer p.knobs.mu.Unlock()
	out := p.knobs.tokenTimes
	p.knobs.tokenTimes = nil
	return out
}

func (p *Provider) knobsNow() (iss string, delay time.Duration, answer http.HandlerFunc) {
	p.knobs.mu.Lock()
	defer p.knobs.mu.Unlock()
	iss = p.knobs.iss
	if iss == "" {
		iss = p.Issuer
	}
	return iss, p.knobs.tokenDelay, p.knobs.tokenAnswer
}

// withBrowser wraps the provider's handler with the browser flow's
// additions.
func (p *Provider) withBrowser(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		iss, delay, answer := p.knobsNow()
		switch {
		case r.URL.Path == loginPath:
			p.loginPage(w, r)
		case r.URL.Path == registerPath && r.Method == http.MethodPost:
			p.register(w, r)
		case r.URL.Path == "/.well-known/openid-configuration":
			p.discovery(w, r, next)
		case r.URL.Path == "/oauth/token":
			start := time.Now()
			time.Sleep(delay)
			if answer != nil {
				answer(w, r)
			} else {
				next.ServeHTTP(w, r)
			}
			p.knobs.mu.Lock()
			p.knobs.tokenTimes = append(p.knobs.tokenTimes, time.Since(start))
			p.knobs.mu.Unlock()
		case r.URL.Path == "/authorize":
			if res := r.URL.Query()["resource"]; len(res) > 0 {
				r = r.WithContext(context.WithValue(r.Context(), resourceKey{}, res))
			}
			next.ServeHTTP(w, r)
		case r.URL.Path == "/authorize/callback":
			next.ServeHTTP(&issWriter{ResponseWriter: w, iss: iss}, r)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// issWriter adds iss to the redirect of an authorization response.
type issWriter struct {
	http.ResponseWriter
	iss string
}

func (w *issWriter) WriteHeader(code int) {
	if loc := w.Header().Get("Location"); code == http.StatusFound && loc != "" {
		if u, err := url.Parse(loc); err == nil && u.Query().Has("state") {
			q := u.Query()
			q.Set("iss", w.iss)
			u.RawQuery = q.Encode()
			w.Header().Set("Location", u.String())
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

// discovery is zitadel's document plus the registration endpoint and
// authorization_response_iss_parameter_supported.
func (p *Provider) discovery(w http.ResponseWriter, r *http.Request, next http.Handler) {
	rec := httptest.NewRecorder()
	next.ServeHTTP(rec, r)
	var doc map[string]any
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &doc) != nil {
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
		return
	}
	doc["registration_endpoint"] = p.Issuer + registerPath
	doc["authorization_response_iss_parameter_supported"] = true
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(doc)
}

// loginPage logs the request's user in: GET /login?id=AUTHREQ&user=NAME
// (a form asks for the name when it is missing), then back to zitadel's
// callback, which redirects to the client with the code.
func (p *Provider) loginPage(w http.ResponseWriter, r *http.Request) {
	id, user := r.FormValue("id"), r.FormValue("user")
	if user == "" {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<form method="post" action="%s"><input type="hidden" name="id" value="%s"><input name="user"><button>Log in</button></form>`,
			loginPath, url.QueryEscape(id))
		return
	}
	if !p.store.login(id, user) {
		http.Error(w, "unknown auth request", http.StatusBadRequest)
		return
	}
	http.Redirect(w, r, p.Issuer+"/authorize/callback?id="+url.QueryEscape(id), http.StatusFound)
}

// register is RFC 7591 dynamic client registration: any redirect URI,
// a fresh client id and secret.
func (p *Provider) register(w http.ResponseWriter, r *http.Request) {
	var meta struct {
		RedirectURIs []string `json:"redirect_uris"`
		AuthMethod   string   `json:"token_endpoint_auth_method"`
		ClientName   string   `json:"client_name"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(&meta); err != nil || len(meta.RedirectURIs) == 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":"invalid_redirect_uri","error_description":"redirect_uris is required"}`))
		return
	}
	c := Client{ID: "dcr_" + rand.Text(), Secret: rand.Text(), RedirectURIs: meta.RedirectURIs, AuthMethod: oidc.AuthMethodBasic}
	if meta.AuthMethod == "none" {
		c.Secret, c.AuthMethod = "", oidc.AuthMethodNone
	}
	p.store.mu.Lock()
	p.store.clients[c.ID] = c
	p.store.counts.Registrations++
	p.store.mu.Unlock()
	resp := map[string]any{"client_id": c.ID, "redirect_uris": c.RedirectURIs, "token_endpoint_auth_method": string(c.AuthMethod),
		"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"}, "client_name": meta.ClientName}
	if c.Secret != "" {
		resp["client_secret"], resp["client_secret_expires_at"] = c.Secret, 0
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(resp)
}

// Browser is a person's browser: it follows redirects, except the last
// one back to the client, whose response it returns.
type Browser struct {
	c *http.Client
}

// NewBrowser is a browser that keeps no connection open after a test.
func NewBrowser() *Browser {
	return &Browser{c: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}}
}

// Login opens authURL, logs in as user at the provider, and follows the
// provider's redirect to the client's callback: it returns the callback
// page's status and text. intercept, when set, may rewrite the callback
// URL before it is opened (an attacker's forged callback).
func (b *Browser) Login(t testing.TB, authURL, user string, intercept func(*url.URL)) (int, string) {
	t.Helper()
	cb := b.CallbackOf(t, authURL, user)
	if intercept != nil {
		intercept(cb)
	}
	return b.Get(t, cb.String())
}

// CallbackOf follows authURL through the login as user and returns the
// URL the provider redirects back to, without opening it.
func (b *Browser) CallbackOf(t testing.TB, authURL, user string) *url.URL {
	t.Helper()
	next, err := url.Parse(authURL)
	if err != nil {
		t.Fatal(err)
	}
	provider := next.Host
	for range 10 {
		if next.Path == loginPath {
			q := next.Query()
			q.Set("user", user)
			next.RawQuery = q.Encode()
		}
		resp, body := b.get(t, next.String())
		loc := resp.Header.Get("Location")
		if resp.StatusCode != http.StatusFound || loc == "" {
			t.Fatalf("browser: the login stopped at %s: %s %s", next.Path, resp.Status, body)
		}
		to, err := next.Parse(loc)
		if err != nil {
			t.Fatalf("bad redirect %q", loc)
		}
		if to.Host != provider {
			return to
		}
		next = to
	}
	t.Fatal("too many redirects")
	return nil
}

// Get fetches url as the browser does, without following a redirect.
func (b *Browser) Get(t testing.TB, url string) (int, string) {
	t.Helper()
	resp, body := b.get(t, url)
	return resp.StatusCode, body
}

func (b *Browser) get(t testing.TB, u string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := b.c.Transport.RoundTrip(req)
	if err != nil {
		t.Fatalf("browser: GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(bytes.TrimSpace(body))
}
