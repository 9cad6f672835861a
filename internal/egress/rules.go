package egress

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Pattern is one entry of an allow or deny list: a host name, a
// "*."-wildcard (any name below the suffix, not the suffix itself), an IP
// address or a CIDR prefix, each optionally with ":port".
type Pattern struct {
	// Text is the entry as configured, Key the config key it came from
	// (sandbox.egress.allow[2]); refusals name both.
	Text, Key string

	host   string       // exact name, lower case, no trailing dot
	suffix string       // ".example.com" for "*.example.com"
	prefix netip.Prefix // an address (a /32 or /128) or a CIDR prefix
	port   int          // 0: any port
}

// ParsePattern parses one entry; the error names key and says how to fix it.
func ParsePattern(key, text string) (Pattern, error) {
	p := Pattern{Text: text, Key: key}
	s := strings.TrimSpace(text)
	bad := func(why string) (Pattern, error) {
		return p, fmt.Errorf("%s: %q %s", key, text, why)
	}
	const shape = "is not a host name, *.wildcard, IP address or CIDR prefix (optionally with :port), e.g. \"pypi.org\", \"*.github.com:443\", \"10.0.0.0/8\""
	switch {
	case s == "":
		return bad("is empty")
	case strings.Contains(s, "://") || strings.ContainsAny(s, "@ ?#"):
		return bad("has a scheme, user or path: " + shape)
	}
	host, port, err := splitPort(s)
	if err != nil {
		return bad(err.Error())
	}
	p.port = port
	switch {
	case strings.Contains(host, "/"):
		pr, err := netip.ParsePrefix(host)
		if err != nil {
			return bad("is not a CIDR prefix such as 10.0.0.0/8")
		}
		p.prefix = pr.Masked()
	case isAddr(host):
		ip, _ := netip.ParseAddr(host)
		ip = ip.Unmap()
		p.prefix = netip.PrefixFrom(ip, ip.BitLen())
	case strings.HasPrefix(host, "*."):
		rest := strings.ToLower(strings.TrimSuffix(host[2:], "."))
		if !validName(rest) {
			return bad(shape)
		}
		p.suffix = "." + rest
	default:
		name := strings.ToLower(strings.TrimSuffix(host, "."))
		if !validName(name) {
			return bad(shape)
		}
		p.host = name
	}
	return p, nil
}

func isAddr(s string) bool { _, err := netip.ParseAddr(s); return err == nil }

// splitPort splits "host:port", "[v6]:port", "[v6]" or a bare IPv6
// address or prefix (more than one colon, no brackets: no port).
func splitPort(s string) (string, int, error) {
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return "", 0, fmt.Errorf("has an unclosed [")
		}
		host, rest := s[1:end], s[end+1:]
		if rest == "" {
			return host, 0, nil
		}
		if !strings.HasPrefix(rest, ":") {
			return "", 0, fmt.Errorf("has text after ]")
		}
		port, err := parsePort(rest[1:])
		return host, port, err
	}
	if strings.Count(s, ":") != 1 {
		return s, 0, nil
	}
	i := strings.IndexByte(s, ':')
	port, err := parsePort(s[i+1:])
	return s[:i], port, err
}

func parsePort(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 {
		return 0, fmt.Errorf("has port %q; a port is 1 to 65535", s)
	}
	return n, nil
}

// validName accepts DNS labels of letters, digits, '-' and '_'.
func validName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

func (p *Pattern) portOK(port int) bool { return p.port == 0 || p.port == port }

// matchName reports whether a name entry covers name (lower case) at port.
func (p *Pattern) matchName(name string, port int) bool {
	switch {
	case p.host != "":
		return p.host == name && p.portOK(port)
	case p.suffix != "":
		return strings.HasSuffix(name, p.suffix) && p.portOK(port)
	}
	return false
}

// matchAddr reports whether an address entry covers ip at port.
func (p *Pattern) matchAddr(ip netip.Addr, port int) bool {
	return p.prefix.IsValid() && p.prefix.Contains(ip) && p.portOK(port)
}

// Rules are one allow and one deny list.
type Rules struct {
	Allow, Deny []Pattern
}

// ParseRules parses the lists of the config key base (e.g. sandbox.egress).
func ParseRules(base string, allow, deny []string) (Rules, error) {
	var r Rules
	for i, s := range allow {
		p, err := ParsePattern(fmt.Sprintf("%s.allow[%d]", base, i), s)
		if err != nil {
			return r, err
		}
		r.Allow = append(r.Allow, p)
	}
	for i, s := range deny {
		p, err := ParsePattern(fmt.Sprintf("%s.deny[%d]", base, i), s)
		if err != nil {
			return r, err
		}
		r.Deny = append(r.Deny, p)
	}
	return r, nil
}

// Refusal is why a connection was refused: the rule (a config key, a
// policy id, or a limit) and the reason in words.
type Refusal struct {
	Rule   string
	Reason string
}

func (r *Refusal) Error() string { return r.Reason }

// checkName is the decision on the name asked before it is resolved: a
// deny entry that names it refuses; an allow entry that names it is
// returned (nil when none does).
func (r *Rules) checkName(name string, port int) (*Pattern, *Refusal) {
	for i := range r.Deny {
		if d := &r.Deny[i]; d.matchName(name, port) {
			return nil, deniedBy(d, name, port)
		}
	}
	for i := range r.Allow {
		if a := &r.Allow[i]; a.matchName(name, port) {
			return a, nil
		}
	}
	return nil, nil
}

// checkAddrs is the decision on the addresses name resolved to: each must
// be allowed (by the name entry, or an address entry), none denied, and an
// inside address (AddrClass) only where an entry names it explicitly — an
// exact host name, or an address or prefix containing it; a Strict one
// (loopback, link-local, unspecified, metadata) only where an address
// entry is that very address.
func (r *Rules) checkAddrs(name string, port int, byName *Pattern, addrs []netip.Addr) *Refusal {
	for _, ip := range addrs {
		for i := range r.Deny {
			if d := &r.Deny[i]; d.matchAddr(ip, port) {
				return deniedBy(d, name, port)
			}
		}
		class := AddrClass(ip)
		if Strict(class) {
			if !r.literal(ip, port) {
				return strictRefusal(name, port, ip, class, byName)
			}
			continue
		}
		var byAddr *Pattern
		for i := range r.Allow {
			if a := &r.Allow[i]; a.matchAddr(ip, port) {
				byAddr = a
				break
			}
		}
		if byName == nil && byAddr == nil {
			return notAllowed(name, port)
		}
		if class != "" && byAddr == nil && (byName == nil || byName.host == "") {
			rule := "allow"
			if byName != nil {
				rule = byName.Key
			}
			return &Refusal{Rule: rule, Reason: fmt.Sprintf("%s:%d is refused: it resolves to %s, %s address, which only an entry naming the exact host or address allows", name, port, ip, article(class))}
		}
	}
	return nil
}

// literal reports whether an allow entry is the address ip itself (not a
// wider prefix) at port.
func (r *Rules) literal(ip netip.Addr, port int) bool {
	for i := range r.Allow {
		a := &r.Allow[i]
		if a.prefix.IsValid() && a.prefix.IsSingleIP() && a.prefix.Addr() == ip && a.portOK(port) {
			return true
		}
	}
	return false
}

// strictRefusal refuses a loopback, link-local, unspecified or metadata
// address that no entry names literally. It suggests no entry to add: no
// name, wildcard or range ever reaches such an address, and one that names
// the address is for the operator to decide on (docs/egress.md).
func strictRefusal(name string, port int, ip netip.Addr, class string, byName *Pattern) *Refusal {
	rule := "allow"
	if byName != nil {
		rule = byName.Key
	}
	what := fmt.Sprintf("it resolves to %s, %s address", ip, article(class))
	if isAddr(name) {
		what = fmt.Sprintf("it is %s address", article(class))
	}
	return &Refusal{Rule: rule, Reason: fmt.Sprintf("%s:%d is refused: %s (the server itself, its host or a cloud metadata service), "+
		"which no host name, wildcard or range in the allow list ever reaches", name, port, what)}
}

// article puts "a" or "an" before an address class.
func article(class string) string {
	if strings.HasPrefix(class, ClassUnspecified) {
		return "an " + class
	}
	return "a " + class
}

func deniedBy(d *Pattern, name string, port int) *Refusal {
	return &Refusal{Rule: d.Key, Reason: fmt.Sprintf("%s:%d is denied by %s (%q)", name, port, d.Key, d.Text)}
}

func notAllowed(name string, port int) *Refusal {
	return &Refusal{Rule: "allow", Reason: fmt.Sprintf("%s:%d is not allowed: no entry of the allow list matches it (add %q to allow it)", name, port, name)}
}
