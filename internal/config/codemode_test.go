package config

import (
	"errors"
	"testing"
	"time"
)

func TestCodeMode(t *testing.T) {
	cfg, err := Parse([]byte(`{}`), "", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CodeMode.Enabled || cfg.CodeMode.MaxCalls != 100 || cfg.CodeMode.Timeout != 10*time.Second ||
		cfg.CodeMode.MaxConcurrency != 8 || cfg.CodeMode.MaxConcurrencyPerPrincipal != 4 {
		t.Fatalf("defaults: %+v", cfg.CodeMode)
	}
	cfg, err = Parse([]byte(`{"codeMode": {"enabled": true, "maxCalls": 7, "timeoutMs": 500, "memoryMB": 128, "maxOutputBytes": 2048,
		"maxConcurrency": 3, "maxConcurrencyPerPrincipal": 0}}`), "", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.CodeMode; !got.Enabled || got.MaxCalls != 7 || got.Timeout != 500*time.Millisecond || got.MemoryMB != 128 || got.MaxOutputBytes != 2048 ||
		got.MaxConcurrency != 3 || got.MaxConcurrencyPerPrincipal != 0 {
		t.Fatalf("parsed: %+v", got)
	}
	bad := []struct{ name, json, key string }{
		{"calls", `{"codeMode": {"maxCalls": 0}}`, "codeMode.maxCalls"},
		{"timeout", `{"codeMode": {"timeoutMs": 5}}`, "codeMode.timeoutMs"},
		{"memory", `{"codeMode": {"memoryMB": 1}}`, "codeMode.memoryMB"},
		{"output", `{"codeMode": {"maxOutputBytes": 1}}`, "codeMode.maxOutputBytes"},
		{"interpreters", `{"codeMode": {"maxConcurrency": -1}}`, "codeMode.maxConcurrency"},
		{"interpreters per token", `{"codeMode": {"maxConcurrencyPerPrincipal": 10001}}`, "codeMode.maxConcurrencyPerPrincipal"},
		{"type", `{"codeMode": {"enabled": "yes"}}`, "codeMode.enabled"},
		{"unknown key", `{"codeMode": {"enable": true}}`, "codeMode.enable"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.json), "", t.TempDir())
			var ce *Error
			if !errors.As(err, &ce) || ce.Key != c.key {
				t.Fatalf("error %v, want one keyed %s", err, c.key)
			}
		})
	}
}
