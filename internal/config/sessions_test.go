package config_test

import (
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/config"
)

func TestSessionsDefaults(t *testing.T) {
	cfg, err := parse(t, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	want := config.Sessions{IdleTimeout: time.Hour, Max: 1000, MaxBytes: 1 << 30}
	if cfg.Sessions != want {
		t.Fatalf("sessions = %+v, want %+v", cfg.Sessions, want)
	}
	cfg, err = parse(t, `{"sessions": {"required": true, "idleTimeout": 1500, "max": 0, "maxBytes": 4096, "shared": true}}`)
	if err != nil {
		t.Fatal(err)
	}
	want = config.Sessions{Required: true, IdleTimeout: 1500 * time.Millisecond, MaxBytes: 4096, Shared: true}
	if cfg.Sessions != want {
		t.Fatalf("sessions = %+v, want %+v", cfg.Sessions, want)
	}
}

func TestSessionsErrorsNameTheKey(t *testing.T) {
	cases := []struct{ text, want string }{
		{`{"sessions": true}`, "config: sessions: must be an object, not a bool"},
		{`{"sessions": {"idleTimeout": 0}}`, "config: sessions.idleTimeout: must be at least 1 millisecond (default 3600000, one hour)"},
		{`{"sessions": {"idleTimeout": "1h"}}`, "config: sessions.idleTimeout: must be an integer, not a string"},
		{`{"sessions": {"max": -1}}`, "config: sessions.max: must be >= 0 (0 = no cap on sessions per principal)"},
		{`{"sessions": {"maxBytes": -1}}`, "config: sessions.maxBytes: must be >= 0 bytes (0 = no quota)"},
		{`{"sessions": {"required": "yes"}}`, "config: sessions.required: must be true or false, not a string"},
		{`{"sessions": {"shared": "nfs"}}`, "config: sessions.shared: must be true or false, not a string"},
		{`{"sessions": {"ttl": 5}}`, "config: sessions.ttl: unknown key (check the spelling; see the README's config reference)"},
	}
	for _, c := range cases {
		if got := mustFail(t, c.text).Error(); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.text, got, c.want)
		}
	}
}
