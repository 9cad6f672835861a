package testutil

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// BackgroundHTTP is an HTTP server a test fake runs in the background and
// may stop and start again, as a test takes an identity provider away and
// brings it back (the idp and oidcop fakes both do). The zero value is
// stopped; it is safe for concurrent use.
type BackgroundHTTP struct {
	mu   sync.Mutex
	srv  *http.Server
	done chan struct{} // closed when srv's Serve has returned
}

// Serve answers on l with h until Stop.
func (b *BackgroundHTTP) Serve(l net.Listener, h http.Handler) {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	b.mu.Lock()
	b.srv, b.done = srv, done
	b.mu.Unlock()
	go func() {
		defer close(done)
		_ = srv.Serve(l)
	}()
}

// Stop closes the server and waits until it has stopped serving; it does
// nothing when the server is not serving.
func (b *BackgroundHTTP) Stop() {
	b.mu.Lock()
	srv, done := b.srv, b.done
	b.srv = nil
	b.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
		<-done
	}
}
