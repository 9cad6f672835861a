package server

import (
	"io"
	"net"
	"net/http"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"
)

// Bounds on what a connection may hold before and between requests. A
// client that connects and says nothing, sends headers a byte at a time,
// or opens thousands of streams on one connection must not pin memory and
// goroutines for as long as it likes.
const (
	// grpcMaxStreams caps the concurrent RPCs on one gRPC connection.
	grpcMaxStreams = 1000
	// handshakeTimeout bounds a gRPC connection's setup (TLS and HTTP/2
	// preface) and an HTTP request's headers.
	handshakeTimeout = 10 * time.Second
	// grpcMaxIdle closes a gRPC connection without an RPC for this long.
	grpcMaxIdle = 5 * time.Minute
	// httpIdle closes a keep-alive HTTP connection between requests.
	httpIdle = 2 * time.Minute
	// metricsReadWrite bounds a whole /metrics or /healthz exchange.
	metricsReadWrite = 30 * time.Second
	// mcpBodyTimeout bounds reading one /mcp request body (the response,
	// an event stream, may rightly last long).
	mcpBodyTimeout = 30 * time.Second
	// maxHeaderBytes caps the request headers on the HTTP listeners.
	maxHeaderBytes = 64 << 10
)

// grpcBounds are the connection bounds of the gRPC server: stream cap,
// handshake timeout, idle close, and keepalive enforcement (a client may
// ping at most every 10 s; one that pings faster is disconnected).
func grpcBounds() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.MaxConcurrentStreams(grpcMaxStreams),
		grpc.ConnectionTimeout(handshakeTimeout),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 10 * time.Second, PermitWithoutStream: true}),
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: grpcMaxIdle}),
	}
}

// metricsHTTPServer serves /metrics and /healthz: short exchanges, so the
// whole request and response are bounded.
func metricsHTTPServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: handshakeTimeout, ReadTimeout: metricsReadWrite,
		WriteTimeout: metricsReadWrite, IdleTimeout: httpIdle, MaxHeaderBytes: maxHeaderBytes}
}

// mcpHTTPServer serves /mcp. Its responses may be long event streams, so
// there is no ReadTimeout or WriteTimeout for the whole exchange (Go's
// ReadTimeout would cancel a stream that outlives it); the body read alone
// is bounded, by boundBody.
func mcpHTTPServer(h http.Handler, connState func(net.Conn, http.ConnState)) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: handshakeTimeout, IdleTimeout: httpIdle,
		MaxHeaderBytes: maxHeaderBytes, ConnState: connState}
}

// boundBody gives a request body d to arrive: the read deadline is set
// when the handler starts and lifted when the body has been read to its
// end, so a client that trickles a body cannot hold a handler open, while
// the response (an event stream) may last as long as it needs. The body is
// not buffered here: the gateway reads it (capped by limits.maxRequestBytes)
// only after the bearer token checks out.
func boundBody(h http.Handler, d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			rc := http.NewResponseController(w)
			if rc.SetReadDeadline(time.Now().Add(d)) == nil {
				r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
			}
		}
		h.ServeHTTP(w, r)
	})
}

type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}
