package server

import (
	"net/http"

	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/console"
)

// The console (internal/console) on the web listener: on whenever the
// listener is, unless server.web.console is false. Its login sessions
// live in the OAuth vault (memory, credentials.dir, or Redis with
// cluster.redis), sealed like the tokens. /approvals lists the tool
// definitions pinning holds beside the held calls (core.HeldDefinitions,
// core.DecideDefinition: admins and policy.approvers only).

// startConsole mounts the console's pages; a client secret that does not
// resolve is a config error, as --check says.
func (s *Server) startConsole(cfg *config.Config) error {
	if s.web == nil || !cfg.Server.Web.ConsoleOn() {
		return nil
	}
	if _, err := cfg.ConsoleSecret(); err != nil {
		return err
	}
	s.console = console.New(console.Options{Core: s.core, Connections: s.oauth, Store: s.oauth.Vault(), Reload: s.reloadForRPC,
		Definitions: console.CatalogDefinitions(s.core), BaseURL: s.web.BaseURL, Logger: s.log})
	s.console.Mount(s.web)
	return nil
}

// oauthCallback is the OAuth callback, which brings a console user back
// to the console's connections once the login succeeded.
func (s *Server) oauthCallback(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.console == nil {
			h.ServeHTTP(w, r)
			return
		}
		s.console.WrapCallback(h).ServeHTTP(w, r)
	})
}
