// Package egress is the proxy through which a sandboxed command with
// `sandbox.egress` set reaches the network: the command's network
// namespace has no route out, and the only listener it can reach is this
// proxy's, on a loopback address inside the namespace. It speaks HTTP
// (CONNECT and plain forwarding) and SOCKS5 on the same port, resolves
// names itself, decides on the name asked and on every address it
// resolves to (deny list, allow list, the address's class, then Cedar),
// connects to exactly the address it checked, and audits and counts
// every connection. docs/egress.md describes it.
package egress

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"time"
)

// Resolver resolves names; *net.Resolver is one, a test passes its own.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Limits bound one command's use of the proxy. Zero means no limit.
type Limits struct {
	Connections int           // connections the command may open
	Bytes       int64         // bytes both ways, over all its connections
	Idle        time.Duration // a connection with no byte either way this long is closed
}

// DefaultLimits apply when the config sets none.
var DefaultLimits = Limits{Connections: 1024, Bytes: 1 << 30, Idle: 2 * time.Minute}

// Call is who a command's connections are made for.
type Call struct {
	Principal, Session, Tool string
}

// ConnectRequest is one connection as a policy sees it.
type ConnectRequest struct {
	Call
	Host string // the name asked (an IP literal as written)
	Port int
}

// Decider is the Cedar decision on a connection the rules allow: nil
// allows it, a Refusal names the policy that refused.
type Decider func(ConnectRequest) *Refusal

// Record is one connection, allowed or refused, for the audit log.
type Record struct {
	Call
	Host     string
	Port     int
	Addr     string // the address connected to ("" when refused before)
	Protocol string // "connect", "http" or "socks5"
	Allowed  bool
	Rule     string // the rule that refused ("" when allowed)
	Reason   string
	Sent     int64 // bytes from the command to the host
	Received int64 // bytes from the host to the command
}

// Config is what a Proxy needs.
type Config struct {
	// Rules apply to every tool without rules of its own in Tools.
	Rules Rules
	// Tools are per-tool rules: they replace Rules.Allow for that tool,
	// and Rules.Deny applies as well.
	Tools  map[string]Rules
	Limits Limits
	// Resolver resolves names (net.DefaultResolver when nil).
	Resolver Resolver
	// Dial connects to a checked address (a net.Dialer when nil).
	Dial func(ctx context.Context, addr netip.AddrPort) (net.Conn, error)
	// Decide is the Cedar decision (nil: the rules alone decide).
	Decide Decider
	// Audit receives every connection's record (nil: none).
	Audit   func(Record)
	Metrics *Metrics
}

// Proxy decides and relays the connections of commands with egress set.
// It holds no connection itself: Bind makes the per-command front.
type Proxy struct {
	cfg Config
}

// New returns a proxy for cfg.
func New(cfg Config) *Proxy {
	if cfg.Resolver == nil {
		cfg.Resolver = net.DefaultResolver
	}
	if cfg.Dial == nil {
		d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
		cfg.Dial = func(ctx context.Context, a netip.AddrPort) (net.Conn, error) {
			return d.DialContext(ctx, "tcp", a.String())
		}
	}
	return &Proxy{cfg: cfg}
}

// rulesFor is the tool's rules: its own allow list when it has one, the
// global deny list always.
func (p *Proxy) rulesFor(tool string) Rules {
	if t, ok := p.cfg.Tools[tool]; ok {
		return Rules{Allow: t.Allow, Deny: append(append([]Pattern(nil), p.cfg.Rules.Deny...), t.Deny...)}
	}
	return p.cfg.Rules
}

// decide is the whole decision on one connection: the name, its
// addresses, then the policy. It returns the addresses to connect to.
func (p *Proxy) decide(ctx context.Context, call Call, rules *Rules, host string, port int) ([]netip.Addr, *Refusal) {
	name := strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if name == "" || port < 1 || port > 65535 {
		return nil, &Refusal{Rule: "request", Reason: "the request names no host and port"}
	}
	byName, ref := rules.checkName(name, port)
	if ref != nil {
		return nil, ref
	}
	var addrs []netip.Addr
	if ip, err := netip.ParseAddr(name); err == nil {
		addrs = []netip.Addr{ip.Unmap()}
	} else {
		if byName == nil && !rules.anyAddr() {
			// No entry can allow it: say so without a lookup.
			return nil, notAllowed(name, port)
		}
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		answers, err := p.cfg.Resolver.LookupNetIP(rctx, "ip", name)
		cancel()
		if err != nil || len(answers) == 0 {
			return nil, &Refusal{Rule: "resolve", Reason: name + " does not resolve"}
		}
		// A copy: the resolver's answer may be shared (a cache's).
		addrs = make([]netip.Addr, len(answers))
		for i, a := range answers {
			addrs[i] = a.Unmap()
		}
	}
	if ref := rules.checkAddrs(name, port, byName, addrs); ref != nil {
		return nil, ref
	}
	if p.cfg.Decide != nil {
		if ref := p.cfg.Decide(ConnectRequest{Call: call, Host: name, Port: port}); ref != nil {
			return nil, ref
		}
	}
	return addrs, nil
}

// anyAddr reports whether an allow entry is an address or prefix.
func (r *Rules) anyAddr() bool {
	for i := range r.Allow {
		if r.Allow[i].prefix.IsValid() {
			return true
		}
	}
	return false
}

// dial connects to the first checked address that answers.
func (p *Proxy) dial(ctx context.Context, addrs []netip.Addr, port int) (net.Conn, string, error) {
	var last error
	for _, ip := range addrs {
		ap := netip.AddrPortFrom(ip, uint16(port))
		c, err := p.cfg.Dial(ctx, ap)
		if err == nil {
			return c, ap.String(), nil
		}
		last = err
	}
	return nil, "", last
}
