package builtin

import (
	"fmt"
	"net/netip"
	"os"
	"slices"
	"strings"

	"github.com/toolnexus/toolnexus/internal/childenv"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/field"
)

// BashConfig is `builtins.bash`.
type BashConfig struct {
	// Env is what the shell gets besides PATH, HOME, LANG, LC_ALL, TERM,
	// TZ, USER and LOGNAME: "NAME" passes the server's variable through
	// (when set), "NAME=value" sets it; values may reference ${VAR} and
	// ${file:/path}, expanded when the tools are built. Kept as written, so
	// comparing two configs never compares a secret.
	Env []string `json:"env,omitempty"`
}

// WebfetchConfig is `builtins.webfetch`.
type WebfetchConfig struct {
	// AllowHosts lets webfetch reach destinations it refuses by default
	// (loopback, link-local, private, unspecified, multicast): a host
	// name as the URL writes it ("localhost", "wiki.internal"), an IP
	// address, or a CIDR prefix ("10.0.0.0/8").
	AllowHosts []string `json:"allowHosts,omitempty"`
}

// parseSecurityKeys reads builtins.bash and builtins.webfetch into cfg.
func parseSecurityKeys(obj field.Object, cfg *Config) error {
	if raw, ok := obj.Get("bash"); ok {
		b, ok := field.ParseObject(raw)
		if !ok {
			return field.Errorf("bash", `must be an object such as {"env": ["GOPATH", "CI=1"]}`)
		}
		if u := b.Unknown([]string{"env"}); len(u) > 0 {
			return field.Errorf("bash."+u[0], "unknown key; the known key is env")
		}
		if _, err := b.Decode("bash", "env", &cfg.Bash.Env, `must be an array of strings: "NAME" to pass a variable through, "NAME=value" to set one`); err != nil {
			return err
		}
		if _, err := cfg.Bash.environ(); err != nil {
			return err
		}
	}
	if raw, ok := obj.Get("webfetch"); ok {
		w, ok := field.ParseObject(raw)
		if !ok {
			return field.Errorf("webfetch", `must be an object such as {"allowHosts": ["localhost"]}`)
		}
		if u := w.Unknown([]string{"allowHosts"}); len(u) > 0 {
			return field.Errorf("webfetch."+u[0], "unknown key; the known key is allowHosts")
		}
		if _, err := w.Decode("webfetch", "allowHosts", &cfg.Webfetch.AllowHosts, `must be an array of host names, IP addresses or CIDR prefixes, e.g. ["localhost", "10.0.0.0/8"]`); err != nil {
			return err
		}
		if _, err := newAllowList(cfg.Webfetch.AllowHosts); err != nil {
			return err
		}
	}
	return nil
}

// environ is the shell's whole environment. Errors are keyed inside the
// builtins section (bash.env[1]).
func (b BashConfig) environ() ([]string, error) {
	extra := map[string]string{}
	for i, e := range b.Env {
		key := fmt.Sprintf("bash.env[%d]", i)
		name, value, set := strings.Cut(e, "=")
		if !childenv.ValidName(name) {
			return nil, field.Errorf(key, "%q: must be NAME (pass the server's variable through) or NAME=value, NAME made of letters, digits and _", e)
		}
		if !set {
			if v, ok := lookupEnv(name); ok {
				extra[name] = v
			}
			continue
		}
		v, err := sources.ExpandEnv(value)
		if err != nil {
			return nil, field.Errorf(key, "%v", err)
		}
		extra[name] = v
	}
	return childenv.Build(extra), nil
}

// allowList is builtins.webfetch.allowHosts, parsed.
type allowList struct {
	names    []string // lower case
	prefixes []netip.Prefix
}

func newAllowList(hosts []string) (allowList, error) {
	var a allowList
	for i, h := range hosts {
		key := fmt.Sprintf("webfetch.allowHosts[%d]", i)
		h = strings.TrimSpace(h)
		switch {
		case h == "":
			return a, field.Errorf(key, "must not be empty")
		case strings.Contains(h, "://"):
			return a, field.Errorf(key, "%q: give a host name, an IP address or a CIDR prefix, without a scheme or port", h)
		case strings.Contains(h, "/"):
			p, err := netip.ParsePrefix(h)
			if err != nil {
				return a, field.Errorf(key, "%q is not a CIDR prefix such as 10.0.0.0/8", h)
			}
			a.prefixes = append(a.prefixes, p.Masked())
		default:
			if ip, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil {
				ip = ip.Unmap()
				a.prefixes = append(a.prefixes, netip.PrefixFrom(ip, ip.BitLen()))
				continue
			}
			if strings.ContainsAny(h, ":@ ") {
				return a, field.Errorf(key, "%q: give a host name, an IP address or a CIDR prefix, without a scheme or port", h)
			}
			a.names = append(a.names, strings.ToLower(strings.TrimSuffix(h, ".")))
		}
	}
	return a, nil
}

func (a allowList) name(host string) bool {
	return len(a.names) > 0 && slices.Contains(a.names, strings.ToLower(strings.TrimSuffix(host, ".")))
}

func (a allowList) addr(ip netip.Addr) bool {
	for _, p := range a.prefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// lookupEnv reads the server's environment.
var lookupEnv = os.LookupEnv
