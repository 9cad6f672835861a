package server

import (
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"
)

// startPprof serves Go runtime profiles on addr, which must be a loopback
// address: profiles show code paths, arguments in flight and heap contents,
// so they are never offered beyond this machine. The handlers are built
// from runtime/pprof here rather than by importing net/http/pprof, whose
// init would add them to http.DefaultServeMux of every embedder.
//
//	GET /debug/pprof/                    the index: every profile, linked
//	GET /debug/pprof/profile?seconds=N   CPU profile (default 10 s, at most 120)
//	GET /debug/pprof/{heap,allocs,goroutine,mutex,block,threadcreate}
func startPprof(addr string) (stop func(), bound net.Addr, err error) {
	if !isLoopback(addr) {
		return nil, nil, fmt.Errorf("--pprof-listen %q: profiles are served on a loopback address only (e.g. 127.0.0.1:6060)", addr)
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("--pprof-listen: %w", err)
	}
	mux := http.NewServeMux()
	// The index, which the startup log names as the address to open.
	mux.HandleFunc("GET /debug/pprof/{$}", servePprofIndex)
	mux.HandleFunc("GET /debug/pprof/profile", func(w http.ResponseWriter, r *http.Request) {
		secs, _ := strconv.Atoi(r.URL.Query().Get("seconds"))
		if secs <= 0 {
			secs = 10
		}
		secs = min(secs, 120)
		w.Header().Set("Content-Type", "application/octet-stream")
		if err := pprof.StartCPUProfile(w); err != nil {
			http.Error(w, err.Error(), http.StatusConflict)
			return
		}
		select {
		case <-time.After(time.Duration(secs) * time.Second):
		case <-r.Context().Done():
		}
		pprof.StopCPUProfile()
	})
	mux.HandleFunc("GET /debug/pprof/{name}", func(w http.ResponseWriter, r *http.Request) {
		p := pprof.Lookup(r.PathValue("name"))
		if p == nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		_ = p.WriteTo(w, 0)
	})
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(lis) }()
	return func() { _ = hs.Close() }, lis.Addr(), nil
}

// servePprofIndex lists the profiles with links, as a browser or curl
// opening the logged address expects, and how to read them.
func servePprofIndex(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	var b strings.Builder
	b.WriteString("<html><head><title>/debug/pprof/</title></head><body>\n<p>Profiles (read them with <code>go tool pprof URL</code>):</p>\n<ul>\n")
	b.WriteString(`<li><a href="profile?seconds=30">profile?seconds=30</a>: CPU, for the given seconds (default 10, at most 120)</li>` + "\n")
	profiles := pprof.Profiles()
	slices.SortFunc(profiles, func(a, b *pprof.Profile) int { return strings.Compare(a.Name(), b.Name()) })
	for _, p := range profiles {
		fmt.Fprintf(&b, "<li><a href=%q>%s</a>: %d</li>\n", p.Name(), html.EscapeString(p.Name()), p.Count())
	}
	b.WriteString("</ul>\n</body></html>\n")
	_, _ = io.WriteString(w, b.String())
}
