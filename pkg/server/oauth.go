package server

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/suspend"
	"github.com/toolnexus/toolnexus/internal/vault"
	"github.com/toolnexus/toolnexus/internal/vault/redisvault"
	"github.com/toolnexus/toolnexus/internal/web"
	"github.com/toolnexus/toolnexus/pkg/sources/oauthclient"
)

// The web listener and each caller's own OAuth connections
// (internal/web, pkg/sources/oauthclient, internal/vault): the vault lives
// in credentials.dir, or in Redis with cluster.redis, or in memory
// without credentials (a warning says what that costs); the manager is
// made whether or not any upstream has an oauth section, so a reload may
// add one. The callback is mounted on the web listener.

// startOAuth makes the vault, the OAuth manager and the web listener.
// suspended is the store of suspended calls the core uses too.
func (s *Server) startOAuth(cfg *config.Config, suspended suspend.Store) error {
	b, keys, err := s.vaultBackend(cfg)
	if err != nil {
		return err
	}
	v, err := vault.New(b, keys)
	if err != nil {
		_ = b.Close()
		return err
	}
	if w := cfg.Server.Web; w.Listen != "" {
		opts := web.Options{Addr: w.Listen, PublicURL: w.PublicURL, Logger: s.log}
		if cfg.Server.TLS.Enabled() {
			opts.TLS = func() *tls.Config { return s.tlsConf.Load() }
		}
		s.web = web.New(opts)
	}
	s.oauth = oauthclient.New(oauthclient.Options{Vault: v, Suspended: suspended, Logger: s.log,
		RedirectURL: s.redirectURL, ClientMetadataURL: s.clientMetadataURL, FlowTTL: cfg.Pending.Timeout})
	if s.web != nil {
		s.web.Handle("GET "+oauthclient.CallbackPath, s.oauthCallback(s.oauth.Callback()))
		s.web.Handle("GET "+oauthclient.ClientMetadataPath, s.clientMetadata())
	}
	for _, w := range cfg.OAuthWarnings() {
		s.log.Warn(w)
	}
	return nil
}

// vaultBackend is where the sealed records live, with the keys that seal
// them.
func (s *Server) vaultBackend(cfg *config.Config) (vault.Backend, vault.Keys, error) {
	c := cfg.Credentials
	if !c.Enabled() {
		return vault.NewMemory(), vault.RandomKeys(), nil
	}
	keys, err := vault.LoadKeys(c.KeyFile)
	if err != nil {
		return nil, nil, &config.Error{Key: "credentials.keyFile", Msg: err.Error()}
	}
	if s.cluster != nil {
		return redisvault.New(s.cluster), keys, nil
	}
	d, err := vault.NewDir(c.Dir)
	if err != nil {
		return nil, nil, &config.Error{Key: "credentials.dir", Msg: err.Error()}
	}
	return d, keys, nil
}

// checkCredentials is what --check and a start refuse of the credentials
// and the oauth sections: no web listener to end a login, a key file that
// does not load.
func checkCredentials(cfg *config.Config) error {
	if err := cfg.CheckOAuth(); err != nil {
		return err
	}
	if cfg.Credentials.Enabled() {
		if _, err := vault.LoadKeys(cfg.Credentials.KeyFile); err != nil {
			return &config.Error{Key: "credentials.keyFile", Msg: err.Error()}
		}
	}
	return nil
}

// redirectURL is the callback's absolute URL ("" without a web listener).
func (s *Server) redirectURL() string {
	if s.web == nil {
		return ""
	}
	return s.web.URL(oauthclient.CallbackPath)
}

// clientMetadataURL is toolnexus's Client ID Metadata Document's URL, when
// browsers and authorization servers reach the web listener over https.
func (s *Server) clientMetadataURL() string {
	if s.web == nil || !strings.HasPrefix(s.web.BaseURL(), "https://") {
		return ""
	}
	return s.web.URL(oauthclient.ClientMetadataPath)
}

// clientMetadata serves the Client ID Metadata Document: toolnexus as a
// public client whose only redirect URI is the callback.
func (s *Server) clientMetadata() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		id := s.clientMetadataURL()
		if id == "" {
			http.NotFound(w, nil)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"client_id": id, "client_name": "toolnexus", "client_uri": s.web.BaseURL(),
			"redirect_uris": []string{s.redirectURL()}, "grant_types": []string{"authorization_code", "refresh_token"},
			"response_types": []string{"code"}, "token_endpoint_auth_method": "none"})
	})
}

// serveWeb serves the web listener (bound by Listen).
func (s *Server) serveWeb(errc chan<- error) {
	if s.web != nil {
		s.web.Serve(errc)
	}
}

// shutdownWeb stops the web listener: a login's callback in progress gets
// two seconds to end.
func (s *Server) shutdownWeb() {
	if s.web == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	s.web.Shutdown(ctx)
}

// closeOAuth ends the manager's subscription and closes the vault.
func (s *Server) closeOAuth() {
	if s.oauth != nil {
		s.oauth.Close()
		_ = s.oauth.Vault().Close()
	}
}

// WebAddr is the bound web listener's address, or nil when it is off.
func (s *Server) WebAddr() net.Addr {
	if s.web == nil {
		return nil
	}
	return s.web.Addr()
}

// Web is the web listener, for mounting more pages (nil when it is off).
func (s *Server) Web() *web.Server { return s.web }
