// Package profile lets the baseline programs (bench/minproxy,
// bench/minecho) be profiled the way the real server is: with
// BENCH_PROFILE_LISTEN=127.0.0.1:PORT set they serve /debug/pprof/ and a
// /metrics page with go_memstats_mallocs_total, so `go -C bench run .
// -target ADDR -metrics PROFILE_ADDR -pid PID` reports their allocations and
// CPU per call exactly as it does toolnexus's. Unset (as in `make bench`),
// nothing is started.
package profile

import (
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"runtime"
)

// Serve starts the endpoint when BENCH_PROFILE_LISTEN is set.
func Serve() {
	addr := os.Getenv("BENCH_PROFILE_LISTEN")
	if addr == "" {
		return
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "profile:", err)
		return
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		fmt.Fprintf(w, "go_memstats_mallocs_total %d\ngo_memstats_alloc_bytes_total %d\ngo_gc_cycles_total %d\n", ms.Mallocs, ms.TotalAlloc, ms.NumGC)
	})
	go func() { _ = http.Serve(lis, mux) }()
}
