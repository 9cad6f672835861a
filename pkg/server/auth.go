package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"path"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/config"
)

// principal is an authenticated caller.
type principal struct {
	name string
	// patterns are the token's tool globs; nil allows everything.
	patterns []string
	// admin may call the admin RPCs (adminMethod).
	admin bool
}

// allows reports whether the caller may see and run a tool. A pattern
// matches the tool name, or with a "source:" prefix the tool's source.
func (p *principal) allows(name, source string) bool {
	if p == nil || p.patterns == nil {
		return true
	}
	for _, pat := range p.patterns {
		if s, ok := strings.CutPrefix(pat, "source:"); ok {
			if m, _ := path.Match(s, source); m {
				return true
			}
			continue
		}
		if m, _ := path.Match(pat, name); m {
			return true
		}
	}
	return false
}

// authenticator checks bearer tokens. Tokens are compared as SHA-256
// digests in constant time, so neither timing nor length reveals a token.
type authenticator struct {
	tokens []authToken
}

type authToken struct {
	digest [32]byte
	p      *principal
}

func newAuthenticator(a config.Auth) *authenticator {
	if !a.Enabled() {
		return nil
	}
	au := &authenticator{}
	for _, t := range a.Tokens {
		au.tokens = append(au.tokens, authToken{digest: sha256.Sum256([]byte(t.Value)), p: &principal{name: t.Name, patterns: t.Tools, admin: t.Admin}})
	}
	return au
}

// authenticate finds the caller's principal from the "authorization:
// Bearer X" metadata. Every token is compared, match or not.
func (a *authenticator) authenticate(ctx context.Context) (*principal, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get("authorization")
	if len(vals) == 0 {
		return nil, status.Error(codes.Unauthenticated, "missing bearer token: send the metadata \"authorization: Bearer <token>\" (client: --token or TOOLNEXUS_TOKEN)")
	}
	tok, ok := strings.CutPrefix(vals[0], "Bearer ")
	if !ok {
		tok, ok = strings.CutPrefix(vals[0], "bearer ")
	}
	if !ok {
		return nil, status.Error(codes.Unauthenticated, "malformed authorization metadata: expected \"Bearer <token>\"")
	}
	return a.check(tok)
}

func (a *authenticator) check(tok string) (*principal, error) {
	d := sha256.Sum256([]byte(tok))
	var found *principal
	for i := range a.tokens {
		if subtle.ConstantTimeCompare(d[:], a.tokens[i].digest[:]) == 1 {
			found = a.tokens[i].p
		}
	}
	if found == nil {
		return nil, status.Error(codes.Unauthenticated, "invalid bearer token")
	}
	return found, nil
}

type principalKey struct{}

func withPrincipal(ctx context.Context, p *principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// principalFrom returns the caller, or nil when auth is off.
func principalFrom(ctx context.Context) *principal {
	p, _ := ctx.Value(principalKey{}).(*principal)
	return p
}

// adminMethod reports whether an RPC needs a token with "admin": true.
//
// Only Reload does. It changes what the whole server runs (sources, child
// processes, limits, tokens), so an agent token, which is meant to run
// tools, must not be able to trigger it; an operator gives one token
// "admin": true for that (or sends SIGHUP). ListSources and ListSkills stay
// open to every valid token: they are read-only, carry no secrets (source
// errors never hold header or token values), and agents use them to tell
// why a tool is missing. Without auth configured there is no admin check
// either: the listener is then loopback-only unless --insecure.
func adminMethod(fullMethod string) bool {
	return fullMethod == pb.SourceService_Reload_FullMethodName
}

// authorize checks an authenticated caller's right to the method.
func (p *principal) authorize(fullMethod string) error {
	if adminMethod(fullMethod) && !p.admin {
		return status.Errorf(codes.PermissionDenied, "token %q may not call %s: it needs \"admin\": true in auth.tokens (agent tokens should not reload the server)", p.name, fullMethod)
	}
	return nil
}

// openMethods need no token: probes and tooling must work without secrets.
func openMethod(fullMethod string) bool {
	return strings.HasPrefix(fullMethod, "/grpc.health.v1.Health/") ||
		strings.HasPrefix(fullMethod, "/grpc.reflection.")
}
