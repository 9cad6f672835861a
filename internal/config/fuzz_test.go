package config_test

import (
	"errors"
	"testing"

	"github.com/toolnexus/toolnexus/internal/config"
)

// FuzzParse: whatever the bytes, Parse never panics, and every failure is
// a *config.Error with a message (the caller prints it and exits 2).
func FuzzParse(f *testing.F) {
	f.Add(config.Default())
	f.Add([]byte(`{"limits": {"timeout": 1, "tools": {"a": {"maxConcurrency": 2}}}, "debug": true}`))
	f.Add([]byte(`{"auth": {"tokens": [{"name": "a", "token": "${HOME}/x-long-enough", "tools": ["fs_*"]}]}}`))
	f.Add([]byte(`{"server": {"listen": "[::1]:0", "tls": {"cert": "a", "key": "b"}}}`))
	f.Add([]byte(`{"fs": {"command": "npx"}}`))
	f.Add([]byte(`[1, {"a": null}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := config.Parse(data, "", "/toolnexus-fuzz")
		if err != nil {
			var ce *config.Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %T %q is not a *config.Error", err, err)
			}
			if ce.Msg == "" {
				t.Fatalf("empty message for key %q", ce.Key)
			}
			return
		}
		l := cfg.Limits
		if l.Timeout < 0 || l.MaxConcurrency < 0 || l.MaxOutputBytes < 0 || l.MaxRequestBytes < 1024 {
			t.Fatalf("accepted invalid limits %+v", l)
		}
		for name := range l.Tools {
			eff := l.For(name)
			if *eff.Timeout < 0 || *eff.MaxConcurrency < 0 || *eff.MaxOutputBytes < 0 {
				t.Fatalf("accepted invalid limits for %q", name)
			}
		}
		for _, tok := range cfg.Auth.Tokens {
			if tok.Name == "" || len(tok.Value) < 8 {
				t.Fatalf("accepted a token without name or with a short secret")
			}
		}
	})
}
