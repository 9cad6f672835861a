package config

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/toolnexus/toolnexus/internal/egress"
)

// Egress is `sandbox.egress`: with it set, sandboxed commands reach the
// network only through the egress proxy, and only where these rules allow
// (docs/egress.md).
type Egress struct {
	Allow, Deny []string
	// Tools are per-tool rules (by tool name, or a sandboxed MCP
	// server's name): their allow list replaces Allow for that tool; the
	// global Deny applies as well.
	Tools  map[string]EgressRules
	Limits egress.Limits
}

// EgressRules are one tool's allow and deny lists.
type EgressRules struct {
	Allow, Deny []string
}

// Rules parses the global and per-tool lists (already validated).
func (e *Egress) Rules() (egress.Rules, map[string]egress.Rules) {
	global, _ := egress.ParseRules("sandbox.egress", e.Allow, e.Deny)
	tools := map[string]egress.Rules{}
	for name, t := range e.Tools {
		tools[name], _ = egress.ParseRules("sandbox.egress.tools."+name, t.Allow, t.Deny)
	}
	return global, tools
}

func parseEgress(raw json.RawMessage) (*Egress, error) {
	var r struct {
		Allow  []string                   `json:"allow"`
		Deny   []string                   `json:"deny"`
		Tools  map[string]json.RawMessage `json:"tools"`
		Limits *struct {
			Connections *int   `json:"connections"`
			Bytes       *int64 `json:"bytes"`
			IdleTimeout *int64 `json:"idleTimeout"`
		} `json:"limits"`
	}
	if err := strictDecode("sandbox.egress", raw, &r); err != nil {
		return nil, err
	}
	e := &Egress{Allow: r.Allow, Deny: r.Deny, Limits: egress.DefaultLimits}
	if _, err := egress.ParseRules("sandbox.egress", r.Allow, r.Deny); err != nil {
		return nil, patternErr(err)
	}
	for name, traw := range r.Tools {
		key := "sandbox.egress.tools." + name
		var t EgressRules
		var tr struct {
			Allow []string `json:"allow"`
			Deny  []string `json:"deny"`
		}
		if err := strictDecode(key, traw, &tr); err != nil {
			return nil, err
		}
		if strings.TrimSpace(name) == "" {
			return nil, keyErr("sandbox.egress.tools", "a tool name must not be empty")
		}
		if _, err := egress.ParseRules(key, tr.Allow, tr.Deny); err != nil {
			return nil, patternErr(err)
		}
		t.Allow, t.Deny = tr.Allow, tr.Deny
		if e.Tools == nil {
			e.Tools = map[string]EgressRules{}
		}
		e.Tools[name] = t
	}
	if l := r.Limits; l != nil {
		if err := nonNegative(&e.Limits.Connections, l.Connections, "sandbox.egress.limits.connections", "must be >= 0 (0 = no limit; default 1024 per command)"); err != nil {
			return nil, err
		}
		if err := nonNegative(&e.Limits.Bytes, l.Bytes, "sandbox.egress.limits.bytes", "must be >= 0 bytes (0 = no limit; default 1073741824, 1 GiB per call)"); err != nil {
			return nil, err
		}
		if err := nonNegativeMillis(&e.Limits.Idle, l.IdleTimeout, "sandbox.egress.limits.idleTimeout", "must be >= 0 milliseconds (0 = none; default 120000)"); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// patternErr turns egress.ParseRules's "key: message" into a config error
// naming the key.
func patternErr(err error) error {
	key, msg, ok := strings.Cut(err.Error(), ": ")
	if !ok {
		return errors.Join(keyErr("sandbox.egress", "%v", err))
	}
	return keyErr(key, "%s", msg)
}
