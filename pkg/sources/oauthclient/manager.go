// Package oauthclient connects each caller's own account at an upstream
// that speaks OAuth 2.1 (an MCP server under the MCP authorization spec,
// and HTTP tools sharing the code): discovery (the upstream's 401
// WWW-Authenticate resource_metadata, RFC 9728, RFC 8414 / OpenID
// discovery), the client (configured, a Client ID Metadata Document, or
// RFC 7591 dynamic registration kept once per deployment), the
// authorization code flow with PKCE S256, RFC 8707 resource and RFC 9207
// iss checks, the callback on the web listener, refresh ahead of expiry
// single-flight per caller and upstream across replicas, and revocation
// (RFC 7009).
//
// Tokens live only in the vault (sealed) and in this process's memory;
// no log line, error text or result carries one.
//
// A call to such an upstream asks ForCall for the caller's token. A caller
// without a connection gets a PENDING result of kind "authorization"
// whose URL is the authorization server's login page; once logged in, it
// calls again with answer {id, ok: true} and the call runs with its own
// token. The login's state lives in the vault and its request in the
// suspended-call store, so the login may end on any replica and the
// answer land on any other.
package oauthclient

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolnexus/toolnexus/internal/suspend"
	"github.com/toolnexus/toolnexus/internal/vault"
)

// CallbackPath is the redirect URI's path on the web listener.
const CallbackPath = "/oauth/callback"

// ClientMetadataPath is where toolnexus serves its Client ID Metadata
// Document on the web listener (used when the public URL is https).
const ClientMetadataPath = "/oauth/client-metadata.json"

// KindAuthorization is the PENDING kind of a call waiting for its caller
// to connect an account.
const KindAuthorization = suspend.KindAuthorization

// Options configure a Manager.
type Options struct {
	// Vault keeps connections, registered clients and logins in progress.
	Vault *vault.Vault
	// Suspended keeps the authorization requests of suspended calls (the
	// same store as every other PENDING kind, shared with cluster.redis).
	Suspended suspend.Store
	// RedirectURL is the callback's absolute URL (the web listener's
	// URL(CallbackPath)); "" while no web listener serves it.
	RedirectURL func() string
	// ClientMetadataURL is the URL of toolnexus's Client ID Metadata
	// Document when one is served over https; "" otherwise.
	ClientMetadataURL func() string
	// HTTPClient makes every request to authorization servers and for
	// metadata (a bounded default when nil).
	HTTPClient *http.Client
	// FlowTTL bounds how long a login may take (10 minutes when zero).
	FlowTTL time.Duration
	Logger  *slog.Logger
}

// DefaultFlowTTL bounds a login.
const DefaultFlowTTL = 10 * time.Minute

// Manager is the deployment's OAuth client: one per process, shared by
// every upstream that has an "oauth" section.
type Manager struct {
	opts Options
	v    *vault.Vault
	log  *slog.Logger
	hc   *http.Client

	mu        sync.Mutex
	upstreams map[string]*Upstream
	waiters   map[string]map[chan struct{}]struct{} // vault keys waited on

	stopWatch func()

	// refused are the access tokens an upstream refused (HTTP 401), by
	// connection: such a token is refreshed even before it expires.
	refusedMu sync.Mutex
	refused   map[string]string

	// refreshes counts the refreshes this process made at token endpoints.
	refreshes atomic.Int64
}

// New makes the manager and subscribes to the vault's changes (a caller
// connecting or disconnecting on another replica). Close ends that.
func New(opts Options) *Manager {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.FlowTTL <= 0 {
		opts.FlowTTL = DefaultFlowTTL
	}
	if opts.RedirectURL == nil {
		opts.RedirectURL = func() string { return "" }
	}
	if opts.ClientMetadataURL == nil {
		opts.ClientMetadataURL = func() string { return "" }
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = defaultHTTPClient()
	}
	m := &Manager{opts: opts, v: opts.Vault, log: opts.Logger, hc: bounded(hc),
		upstreams: map[string]*Upstream{}, waiters: map[string]map[chan struct{}]struct{}{}, refused: map[string]string{}}
	m.stopWatch = m.v.Watch(m.changed)
	return m
}

// Close stops watching the vault. The vault itself is its owner's to close.
func (m *Manager) Close() { m.stopWatch() }

// Refreshes is how many refreshes this process made at token endpoints.
func (m *Manager) Refreshes() int64 { return m.refreshes.Load() }

func (m *Manager) clearRefused(key string) {
	m.refusedMu.Lock()
	delete(m.refused, key)
	m.refusedMu.Unlock()
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// Vault is the manager's vault.
func (m *Manager) Vault() *vault.Vault { return m.v }

// register makes u the upstream of its name (a reload's new source
// replaces the old one's entry; the old one keeps working for calls still
// running on it).
func (m *Manager) register(u *Upstream) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.upstreams[u.name] = u
}

// unregister drops u, unless a newer upstream of its name replaced it.
func (m *Manager) unregister(u *Upstream) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.upstreams[u.name] == u {
		delete(m.upstreams, u.name)
	}
}

func (m *Manager) upstream(name string) *Upstream {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.upstreams[name]
}

// Upstreams are the names of the upstreams with an oauth section.
func (m *Manager) Upstreams() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, 0, len(m.upstreams))
	for n := range m.upstreams {
		out = append(out, n)
	}
	return out
}

// changed hears every vault change: a connection written or removed drops
// the cached token of that caller and upstream (here or on another
// replica), a source record wakes the upstream's source, and waiters on
// the key wake.
func (m *Manager) changed(key string) {
	if up, principal, ok := parseConnKey(key); ok {
		if u := m.upstream(up); u != nil {
			u.forget(principal)
			u.poke()
		}
	}
	m.mu.Lock()
	for _, u := range m.upstreams {
		if key == sourceKey(u.name) {
			u.poke()
		}
	}
	for ch := range m.waiters[key] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	m.mu.Unlock()
}

// waitChange blocks until one of keys changes, poll passes (a lost
// notification), or ctx ends (its error).
func (m *Manager) waitChange(ctx context.Context, poll time.Duration, keys ...string) error {
	ch := make(chan struct{}, 1)
	m.mu.Lock()
	for _, k := range keys {
		if m.waiters[k] == nil {
			m.waiters[k] = map[chan struct{}]struct{}{}
		}
		m.waiters[k][ch] = struct{}{}
	}
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		for _, k := range keys {
			delete(m.waiters[k], ch)
			if len(m.waiters[k]) == 0 {
				delete(m.waiters, k)
			}
		}
		m.mu.Unlock()
	}()
	t := time.NewTimer(poll)
	defer t.Stop()
	select {
	case <-ch:
		return nil
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// errStore wraps a vault failure for a caller: the text says the store
// failed, never what was in it.
func errStore(err error) error {
	if err == nil {
		return nil
	}
	return &Error{Reason: "the credential store failed: " + err.Error()}
}
