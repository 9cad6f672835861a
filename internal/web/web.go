// Package web is toolnexus's listener for people with a browser
// (--web-listen, server.web.listen): where a person lands after logging
// in at an upstream's authorization server (/oauth/callback), and where
// later pages mount (a console: login, approvals, connections).
//
// Mounting a page is one call, before or after Serve:
//
//	w.Handle("GET /connections", connectionsPage)
//	w.HandleFunc("POST /approvals/{id}", decide)
//
// Patterns are net/http ServeMux patterns (method, exact path, or a
// subtree ending in "/", with {wildcards}); a path no handler claims is
// 404. Every response carries the security headers (security.go): no
// caching, no framing, no referrer (a callback URL holds a code and a
// state), nosniff, and a Content-Security-Policy that allows no script or
// fetch and only inline styles; a page that needs more sets its own
// Content-Security-Policy header before writing. URL(path) is the absolute
// address a browser reaches path at: server.web.publicUrl when toolnexus
// sits behind a proxy, otherwise the listener's own.
package web

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Options configure the listener.
type Options struct {
	// Addr is HOST:PORT to listen on (server.web.listen).
	Addr string
	// PublicURL is the external base URL (server.web.publicUrl), e.g.
	// https://tools.example.com; empty means the listener's own URL.
	PublicURL string
	// TLS, when set, serves HTTPS with the config it returns at each
	// handshake (so a reload swaps certificates); nil serves HTTP.
	TLS func() *tls.Config
	// Logger receives the listener's errors.
	Logger *slog.Logger
}

// Server is the web listener.
type Server struct {
	opts Options
	mux  *http.ServeMux
	log  *slog.Logger

	mu   sync.Mutex
	lis  net.Listener
	srv  *http.Server
	done chan struct{}
}

// New makes the listener; nothing is bound until Listen.
func New(opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	opts.PublicURL = strings.TrimRight(opts.PublicURL, "/")
	return &Server{opts: opts, mux: http.NewServeMux(), log: opts.Logger}
}

// Handle mounts h at pattern (a net/http ServeMux pattern). Mounting the
// same pattern twice panics, as ServeMux does: two pages cannot both own
// a path.
func (s *Server) Handle(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

// HandleFunc mounts f at pattern.
func (s *Server) HandleFunc(pattern string, f func(http.ResponseWriter, *http.Request)) {
	s.mux.HandleFunc(pattern, f)
}

// Handler is every mounted page behind the security headers, for serving
// on a listener of your own (tests, embedding).
func (s *Server) Handler() http.Handler { return secure(s.mux, s.https()) }

// https reports whether browsers reach the listener over HTTPS.
func (s *Server) https() bool {
	return s.opts.TLS != nil || strings.HasPrefix(s.opts.PublicURL, "https://")
}

// Listen binds the address.
func (s *Server) Listen() error {
	lis, err := net.Listen("tcp", s.opts.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s (server.web.listen / --web-listen): %w", s.opts.Addr, err)
	}
	s.mu.Lock()
	s.lis = lis
	s.mu.Unlock()
	return nil
}

// Addr is the bound address (nil before Listen).
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lis == nil {
		return nil
	}
	return s.lis.Addr()
}

// BaseURL is where browsers reach the listener: the public URL, else the
// bound address (the configured one before Listen).
func (s *Server) BaseURL() string {
	if s.opts.PublicURL != "" {
		return s.opts.PublicURL
	}
	addr := s.opts.Addr
	if a := s.Addr(); a != nil {
		addr = a.String()
	}
	if s.opts.TLS != nil {
		return "https://" + addr
	}
	return "http://" + addr
}

// URL is path's absolute URL as a browser reaches it.
func (s *Server) URL(path string) string { return s.BaseURL() + path }

// Serve serves until Shutdown; it returns at once, reporting a failure of
// the listener on errc (never blocking).
func (s *Server) Serve(errc chan<- error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lis == nil || s.srv != nil {
		return
	}
	lis := s.lis
	if s.opts.TLS != nil {
		lis = tls.NewListener(lis, &tls.Config{MinVersion: tls.VersionTLS12,
			GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) { return s.opts.TLS(), nil }})
	}
	s.srv = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 60 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10,
		ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelDebug)}
	s.done = make(chan struct{})
	srv, done := s.srv, s.done
	go func() {
		defer close(done)
		if err := srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			select {
			case errc <- fmt.Errorf("web listener: %w", err):
			default:
			}
		}
	}()
}

// Shutdown stops accepting, lets requests in progress finish until ctx
// ends, then closes what is left. Safe before Serve and twice.
func (s *Server) Shutdown(ctx context.Context) {
	s.mu.Lock()
	srv, lis, done := s.srv, s.lis, s.done
	s.srv, s.lis = nil, nil
	s.mu.Unlock()
	if srv == nil {
		if lis != nil {
			lis.Close()
		}
		return
	}
	if err := srv.Shutdown(ctx); err != nil {
		_ = srv.Close()
	}
	<-done
}
