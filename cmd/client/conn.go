package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"os"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/resolver"
	"google.golang.org/protobuf/proto"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
)

// roundRobin spreads calls over every address a dns target resolves to:
// N stateless server replicas behind one headless-service name all get work.
const roundRobin = `{"loadBalancingConfig":[{"round_robin":{}}]}`

// maxRecvBytes leaves room for a 10,000-tool ListTools page and large tool
// outputs; grpc-go's 4 MiB default is too small for both.
const maxRecvBytes = 256 << 20

// dialOptions turns the global flags into grpc dial options. Problems with
// the flags or the files they name are usage errors.
func (g *globals) dialOptions() ([]grpc.DialOption, error) {
	opts := []grpc.DialOption{
		grpc.WithUserAgent("toolnexus-cli"),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxRecvBytes)),
	}
	if g.addr == "" {
		return nil, usagef("--addr is empty; give HOST:PORT (default %s)", defaultAddr)
	}
	secure := g.tls || g.ca != "" || g.cert != "" || g.key != ""
	if secure {
		tc, err := g.tlsConfig()
		if err != nil {
			return nil, err
		}
		opts = append(opts, grpc.WithTransportCredentials(credentials.NewTLS(tc)))
	} else {
		if g.serverName != "" {
			return nil, usagef("--server-name only applies to TLS; add --tls")
		}
		opts = append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))
	}
	if g.token != "" {
		if strings.ContainsAny(g.token, "\r\n\t ") {
			return nil, usagef("--token / TOOLNEXUS_TOKEN contains whitespace; pass the bare token")
		}
		opts = append(opts, grpc.WithPerRPCCredentials(bearer{token: g.token}))
	}
	if g.session != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(sessionKey{id: g.session}))
	}
	if isDNSTarget(g.addr) {
		opts = append(opts, grpc.WithDefaultServiceConfig(roundRobin))
	}
	return opts, nil
}

func (g *globals) tlsConfig() (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: g.serverName}
	if g.ca != "" {
		pem, err := os.ReadFile(g.ca)
		if err != nil {
			return nil, usagef("--ca: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, usagef("--ca %s holds no PEM certificate", g.ca)
		}
		tc.RootCAs = pool
	}
	if (g.cert == "") != (g.key == "") {
		return nil, usagef("--cert and --key go together: mutual TLS needs the certificate and its private key")
	}
	if g.cert != "" {
		cert, err := tls.LoadX509KeyPair(g.cert, g.key)
		if err != nil {
			return nil, usagef("--cert %s / --key %s: %v", g.cert, g.key, err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

// isDNSTarget reports whether grpc resolves target through DNS: an explicit
// dns: scheme, or a bare HOST:PORT (grpc.NewClient's default resolver).
func isDNSTarget(target string) bool {
	scheme, _, ok := strings.Cut(target, ":")
	if !ok {
		return true
	}
	if scheme == "dns" {
		return true
	}
	// unix:, passthrough:, xds: ... name their own resolver.
	return resolver.Get(scheme) == nil
}

// bearer sends the token with every call. It is allowed on plaintext on
// purpose: the server listens on loopback by default, and refusing there
// would push people to drop auth instead.
type bearer struct{ token string }

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + b.token}, nil
}

func (b bearer) RequireTransportSecurity() bool { return false }

// sessionKey names the session on every call; the server checks the id.
type sessionKey struct{ id string }

func (s sessionKey) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"toolnexus-session": s.id}, nil
}

func (s sessionKey) RequireTransportSecurity() bool { return false }

// conn is an open connection with the two service clients.
type conn struct {
	cc      *grpc.ClientConn
	reg     pb.RegistryServiceClient
	sources pb.SourceServiceClient
}

// dial connects lazily: grpc.NewClient does no I/O, the first call does.
func (c *cli) dial() (*conn, error) {
	opts, err := c.g.dialOptions()
	if err != nil {
		return nil, err
	}
	cc, err := grpc.NewClient(c.g.addr, opts...)
	if err != nil {
		return nil, usagef("--addr %q: %v", c.g.addr, err)
	}
	return &conn{cc: cc, reg: pb.NewRegistryServiceClient(cc), sources: pb.NewSourceServiceClient(cc)}, nil
}

func (k *conn) Close() { k.cc.Close() }

// session is what every one-shot command starts with: a connection and the
// call's context; done releases both.
func (c *cli) session() (*conn, context.Context, func(), error) {
	k, err := c.dial()
	if err != nil {
		return nil, nil, nil, err
	}
	ctx, cancel := c.callContext()
	return k, ctx, func() { cancel(); k.Close() }, nil
}

// callContext bounds one unary call by --timeout.
func (c *cli) callContext() (context.Context, context.CancelFunc) {
	if c.g.timeout <= 0 {
		return context.WithCancel(c.ctx)
	}
	return context.WithTimeout(c.ctx, c.g.timeout)
}

// unary is every one-shot command's shape: connect, make one call under
// --timeout, then print the response — as JSON under --json, else with
// text.
func unary[R proto.Message](c *cli, call func(context.Context, *conn) (R, error), text func(R) error) error {
	k, ctx, done, err := c.session()
	if err != nil {
		return err
	}
	defer done()
	resp, err := call(ctx, k)
	if err != nil {
		return err
	}
	if c.g.json {
		return writeJSON(c.stdout, resp)
	}
	return text(resp)
}
