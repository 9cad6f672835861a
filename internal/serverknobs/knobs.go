// Package serverknobs carries the settings of pkg/server that exist only
// for the project's own tests and benchmarks, so that they never appear in
// the public Options: an embedder cannot turn off what keeps a server safe.
package serverknobs

// Knobs are the hidden settings.
type Knobs struct {
	// DisableInterceptors serves without the gRPC interceptor chain: no
	// auth, no panic guard, no metrics. `make bench` uses it to measure
	// what the chain costs.
	DisableInterceptors bool
}

// set stores k in a *server.Options; pkg/server installs it when it loads,
// since this package cannot import it (pkg/server imports this one).
var set func(opts any, k Knobs)

// Install is called once by pkg/server.
func Install(f func(opts any, k Knobs)) { set = f }

// Set stores k in opts, a *server.Options.
func Set(opts any, k Knobs) { set(opts, k) }
