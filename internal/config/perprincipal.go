package config

// DefaultToolConcurrencyPerPrincipal caps how many calls of a costly tool
// one principal (one token; every caller when auth is off) may run at
// once, when the config sets no limits.tools.NAME.maxConcurrencyPerPrincipal:
// half of the tool's default cap, so one caller flooding bash with slow
// commands leaves slots for everyone else. 0 there lifts it.
var DefaultToolConcurrencyPerPrincipal = map[string]int{"bash": 4}

// checkPerPrincipal checks limits.tools.NAME.maxConcurrencyPerPrincipal.
// It is per tool only: the global limits object has no such key (the
// strict decode of the global object names it as unknown there).
func checkPerPrincipal(key string, n *int) error {
	if n != nil && *n < 0 {
		return keyErr(key+".maxConcurrencyPerPrincipal", "must be >= 0 (calls of this tool one token may run at once; 0 = no cap)")
	}
	return nil
}

// applyDefaultPerPrincipalCaps gives the tools in
// DefaultToolConcurrencyPerPrincipal their cap unless the config sets one.
func applyDefaultPerPrincipalCaps(l *Limits) {
	for name, n := range DefaultToolConcurrencyPerPrincipal {
		t := l.Tools[name]
		if t.MaxConcurrencyPerPrincipal != nil {
			continue
		}
		if l.Tools == nil {
			l.Tools = map[string]ToolLimits{}
		}
		t.MaxConcurrencyPerPrincipal = &n
		l.Tools[name] = t
	}
}
