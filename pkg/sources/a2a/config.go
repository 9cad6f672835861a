package a2a

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/field"
	"github.com/toolnexus/toolnexus/pkg/sources/tokenexchange"
)

// Defaults for an agent entry, in milliseconds.
const (
	DefaultTimeout   = 300000
	DefaultPollEvery = 1000
)

// AgentConfig is one entry of the `agents` section, with defaults applied.
//
// It marshals deterministically (fixed field order, sorted header keys) and
// keeps `${VAR}` header text unexpanded, so the engine can fingerprint it
// to tell whether a reload changed the agent without ever holding a secret.
type AgentConfig struct {
	// Card is the agent card URL (http or https).
	Card string `json:"card"`
	// Headers go on every request to the agent, the card fetch included.
	// Values may hold ${VAR}; they are expanded at Start, never logged.
	Headers map[string]string `json:"headers,omitempty"`
	// Timeout bounds one call (submit, polls, result), in milliseconds.
	Timeout int `json:"timeout"`
	// PollEvery is the wait between two GetTask polls, in milliseconds.
	PollEvery int `json:"pollEvery"`
	// Disabled is the resolved enabled/disabled pair: `disabled: true` wins,
	// then `enabled: false`.
	Disabled bool `json:"disabled,omitempty"`
	// TokenExchange sends the caller's identity with every call, exchanged
	// (RFC 8693); the card fetch, which has no caller, does not use it.
	TokenExchange *tokenexchange.Config `json:"tokenExchange,omitempty"`
}

// knownKeys are the keys an agent entry may carry, for the unknown-key warning.
var knownKeys = []string{"card", "headers", "timeout", "pollEvery", "enabled", "disabled", "tokenExchange"}

// ParseConfig reads the `agents` section: an object mapping an agent id to
// its entry. A missing or null section gives no agents. Errors name the key
// path inside the section (the caller prefixes "agents"); unknown keys in an
// entry are warnings, not errors, so a newer config still loads.
func ParseConfig(raw json.RawMessage) (map[string]AgentConfig, []string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil, nil
	}
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, nil, field.Errorf("", `must be an object mapping an agent id to {"card": URL, ...}`)
	}
	ids := make([]string, 0, len(entries))
	for id := range entries {
		ids = append(ids, id)
	}
	sort.Strings(ids)

	out := make(map[string]AgentConfig, len(entries))
	var warns []string
	for _, id := range ids {
		if strings.TrimSpace(id) == "" {
			return nil, nil, field.Errorf("", `agent id must not be empty: name the agent, e.g. "reviewer": {"card": URL}`)
		}
		cfg, w, err := parseAgent(id, entries[id])
		if err != nil {
			return nil, nil, err
		}
		warns = append(warns, w...)
		out[id] = cfg
	}
	return out, warns, nil
}

func parseAgent(id string, raw json.RawMessage) (AgentConfig, []string, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return AgentConfig{}, nil, field.Errorf(id, `must be an object such as {"card": "https://host/.well-known/agent-card.json"}`)
	}
	cfg := AgentConfig{Timeout: DefaultTimeout, PollEvery: DefaultPollEvery}
	var warns []string

	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if slices.Contains(knownKeys, k) {
			continue
		}
		// A misspelt key or a filter the entry cannot have fails closed.
		if fatal, msg := sources.UnknownKey(k, knownKeys, false); fatal {
			return AgentConfig{}, nil, field.Errorf(id+"."+k, "%s", msg)
		}
		warns = append(warns, fmt.Sprintf("%s: unknown key %q is ignored (known keys: %s)", id, k, strings.Join(knownKeys, ", ")))
	}

	cardRaw, ok := fields["card"]
	if !ok || field.IsNull(cardRaw) {
		return AgentConfig{}, nil, field.Errorf(id+".card", "is required: set it to the agent card URL, e.g. https://host/.well-known/agent-card.json")
	}
	if err := json.Unmarshal(cardRaw, &cfg.Card); err != nil {
		return AgentConfig{}, nil, field.Errorf(id+".card", "must be a string holding the agent card URL")
	}
	if err := checkCardURL(cfg.Card); err != nil {
		return AgentConfig{}, nil, field.Errorf(id+".card", "%v", err)
	}

	if h, ok := fields["headers"]; ok && !field.IsNull(h) {
		if err := json.Unmarshal(h, &cfg.Headers); err != nil {
			return AgentConfig{}, nil, field.Errorf(id+".headers", `must be an object of strings, e.g. {"Authorization": "Bearer ${TOKEN}"}`)
		}
		for name := range cfg.Headers {
			if strings.TrimSpace(name) == "" || strings.ContainsAny(name, " \t\r\n:") {
				return AgentConfig{}, nil, field.Errorf(id+".headers", "%q is not a valid header name", name)
			}
		}
		if len(cfg.Headers) == 0 {
			cfg.Headers = nil
		}
	}

	var err error
	if cfg.TokenExchange, err = tokenexchange.Parse(id, fields); err != nil {
		return AgentConfig{}, nil, err
	}
	if cfg.Timeout, err = field.Object(fields).Millis("", "timeout", DefaultTimeout, fmt.Sprintf("must be a positive whole number of milliseconds (default %d)", DefaultTimeout)); err != nil {
		return AgentConfig{}, nil, field.Under(id, err)
	}
	if cfg.PollEvery, err = field.Object(fields).Millis("", "pollEvery", DefaultPollEvery, fmt.Sprintf("must be a positive whole number of milliseconds (default %d)", DefaultPollEvery)); err != nil {
		return AgentConfig{}, nil, field.Under(id, err)
	}

	enabled, disabled := true, false
	if v, ok := fields["enabled"]; ok && !field.IsNull(v) {
		if json.Unmarshal(v, &enabled) != nil {
			return AgentConfig{}, nil, field.Errorf(id+".enabled", "must be true or false")
		}
	}
	if v, ok := fields["disabled"]; ok && !field.IsNull(v) {
		if json.Unmarshal(v, &disabled) != nil {
			return AgentConfig{}, nil, field.Errorf(id+".disabled", "must be true or false")
		}
	}
	cfg.Disabled = disabled || !enabled
	return cfg, warns, nil
}

func checkCardURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return field.Errorf("", "must be an http or https URL of the agent card, e.g. https://host/.well-known/agent-card.json (got %q)", s)
	}
	return nil
}
