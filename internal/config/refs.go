package config

import (
	"fmt"

	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/tokenexchange"
)

// CheckRefs resolves every ${VAR} and ${file:/path} the sources expand when
// they start (headers, environment, token exchange secrets). A start does
// not refuse these — the source fails alone and is retried — but a
// `--check` that says "config OK" for a header naming an unset variable
// would pass a deployment whose MCP server then never connects. The first
// reference that does not resolve is a *Error naming the key and the
// reference (never a value).
func (c *Config) CheckRefs() error {
	var refs []ref
	for _, name := range sortedKeys(c.MCP) {
		sc := c.MCP[name]
		at := "mcpServers." + name
		refs = appendMap(refs, at+".headers", sc.Headers)
		envKey := sc.EnvironmentKey // the spelling the config used: "env" or "environment"
		if envKey == "" {
			envKey = "environment"
		}
		refs = appendMap(refs, at+"."+envKey, sc.Environment)
		refs = appendExchange(refs, at, sc.TokenExchange)
	}
	for i, t := range c.HTTP.Tools {
		at := fmt.Sprintf("http[%d]", i)
		refs = appendMap(refs, at+".headers", t.Headers)
		refs = appendExchange(refs, at, t.TokenExchange)
	}
	for i, o := range c.HTTP.OpenAPI {
		at := fmt.Sprintf("openapi[%d]", i)
		refs = appendMap(refs, at+".headers", o.Headers)
		refs = appendExchange(refs, at, o.TokenExchange)
	}
	for _, id := range sortedKeys(c.Agents) {
		a := c.Agents[id]
		refs = appendMap(refs, "agents."+id+".headers", a.Headers)
		refs = appendExchange(refs, "agents."+id, a.TokenExchange)
	}
	if err := c.checkConsoleRefs(); err != nil {
		return err
	}
	for _, r := range refs {
		if _, err := sources.ExpandEnv(r.value); err != nil {
			return &Error{Key: r.key, Msg: err.Error() + "; the source would fail at start: set the variable in the server's environment or mount the file"}
		}
	}
	return nil
}

type ref struct{ key, value string }

func appendMap(refs []ref, at string, m map[string]string) []ref {
	for _, k := range sortedKeys(m) {
		if sources.HasSecretRef(m[k]) {
			refs = append(refs, ref{at + "." + k, m[k]})
		}
	}
	return refs
}

func appendExchange(refs []ref, at string, tx *tokenexchange.Config) []ref {
	if tx != nil && sources.HasSecretRef(tx.ClientSecret) {
		refs = append(refs, ref{at + ".tokenExchange.clientSecret", tx.ClientSecret})
	}
	return refs
}
