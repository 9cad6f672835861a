// Package servertest runs a whole toolnexus server (pkg/server) inside a
// test process: New, Listen, Serve in the background, and a stop that
// ends Serve and reports its error. The tests of cmd/, docs/, deploy/,
// examples/, pkg/server and the benchmarks each wrote these steps out
// again; here they are once, so a change to how a server starts and stops
// is made in one place.
//
// It lives apart from internal/testutil because it imports pkg/server:
// the in-package tests of the packages pkg/server is built from import
// internal/testutil, and would form an import cycle through it.
package servertest

import (
	"context"
	"sync"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/server"
)

// Run makes a server from opts, binds its listeners and serves in the
// background until stop, which ends Serve and returns its error. It is for
// a TestMain or a helper that has no testing.TB; a test wants Start. A
// server that cannot listen is closed before Run returns.
func Run(opts server.Options) (srv *server.Server, stop func() error, err error) {
	srv, err = server.New(opts)
	if err != nil {
		return nil, nil, err
	}
	if err := srv.Listen(); err != nil {
		_ = srv.Close(context.Background())
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	return srv, func() error { cancel(); return <-done }, nil
}

// Start is Run for a test: an error starting ends the test, and stop
// fails it when Serve returned an error. stop may be called early (to
// shut the server down mid-test) and more than once; it runs at cleanup
// anyway, so no server outlives its test.
func Start(t testing.TB, opts server.Options) (srv *server.Server, stop func()) {
	t.Helper()
	srv, stopServe, err := Run(opts)
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			if err := stopServe(); err != nil {
				t.Errorf("Serve: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return srv, stop
}
